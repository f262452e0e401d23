"""Metrics about Limelight itself, in Prometheus' format (prometheus-client).

With ``serve --workers N`` every process counts on its own: the server then runs
prometheus-client's multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``, set by
``serve`` before the workers start), each process writes its values to files
there, and a scrape of any process reads them all. Gauges of things in progress
add up the live processes' values ("livesum").
"""

from __future__ import annotations

import os

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)

# The *_created series (when each counter was made) say nothing an operator needs.
disable_created_metrics()  # type: ignore[no-untyped-call]

MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"

HTTP_REQUESTS = Counter(
    "limelight_http_requests",
    "HTTP requests answered, by route (its template), method and status.",
    ["route", "method", "status"],
)
HTTP_SECONDS = Histogram(
    "limelight_http_request_duration_seconds",
    "Time from a request's arrival to the end of its response, by route.",
    ["route"],
)
INGEST_EVENTS = Counter(
    "limelight_ingest_events",
    "Events (and OTLP spans, log records and data points) by API and outcome: accepted, or "
    "the reason each was refused (not_an_object, too_deep, too_large, invalid).",
    ["api", "outcome"],
)
INGEST_BYTES = Counter(
    "limelight_ingest_bytes",
    "Request bodies read (decompressed) by API and outcome: accepted, partial (some events "
    "refused), or the reason the request was refused whole (bad_request, payload_too_large, "
    "service_unavailable, ...).",
    ["api", "outcome"],
)
INSERT_SECONDS = Histogram(
    "limelight_insert_duration_seconds",
    "Time a request's events took to be stored: their INSERT, or the wait for and the "
    "INSERT of the group of small requests they joined.",
)
QUERY_RUN_SECONDS = Histogram(
    "limelight_query_run_duration_seconds",
    "Time a query run took to execute (queueing not counted), by its status.",
    ["status"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
QUERY_RUN_QUEUE_SECONDS = Histogram(
    "limelight_query_run_queue_seconds", "Time a query run waited for a worker."
)
QUERY_RUNS_WAITING = Gauge(
    "limelight_query_runs_waiting",
    "Query runs waiting for a worker (the queue's depth).",
    multiprocess_mode="livesum",
)
QUERY_RUNS_REFUSED = Counter(
    "limelight_query_runs_refused",
    "Query runs the run queue refused (503), by reason: workspace_queue_full (the "
    "workspace's waiting runs at their bound), queue_full (the server's), stopping (the "
    "server is starting or stopping).",
    ["reason"],
)
OTLP_IN_FLIGHT = Gauge(
    "limelight_otlp_requests_in_flight",
    "OTLP requests being stored now.",
    multiprocess_mode="livesum",
)
ALERT_CHECKS = Counter(
    "limelight_alert_checks", "Alert checks done, by the state they found.", ["state"]
)
ALERT_CHECK_SECONDS = Histogram(
    "limelight_alert_check_duration_seconds", "Time of one alert check."
)


def exposition() -> tuple[bytes, str]:
    """Every metric of the server (all its processes in multiprocess mode), and the
    content type to send it with."""
    if os.environ.get(MULTIPROCESS_VARIABLE):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def process_exited(pid: int) -> None:
    """Drop a finished process's live gauges (multiprocess mode)."""
    if os.environ.get(MULTIPROCESS_VARIABLE):
        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]
