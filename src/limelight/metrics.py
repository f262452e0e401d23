"""Metrics about Limelight itself, in Prometheus' format (prometheus-client).

With ``serve --workers N`` every process counts on its own: the server then runs
prometheus-client's multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``, set by
``serve`` before the workers start), each process writes its values to files
there, and a scrape of any process reads them all. Gauges of things in progress
add up the live processes' values ("livesum").
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

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
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

log = logging.getLogger("limelight.metrics")

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
    "the reason each was refused (not_an_object, too_deep, too_large, invalid; "
    "unsupported_action and invalid_index for Elasticsearch bulk items).",
    ["api", "outcome"],
)
INGEST_BYTES = Counter(
    "limelight_ingest_bytes",
    "Request bodies read (decompressed) by API and outcome: accepted, partial (some events "
    "refused), or the reason the request was refused whole (bad_request, payload_too_large, "
    "service_unavailable, ...).",
    ["api", "outcome"],
)
EVENTS_STORED = Counter(
    "limelight_events_stored",
    "Events stored and acknowledged, by the ingest path that took them: events (the Events "
    "API, which Baselime's clients use), otlp_traces, otlp_logs, otlp_metrics, and the "
    "shippers' formats: es_bulk (Elasticsearch bulk), loki, splunk_hec.",
    ["api"],
)
INSERT_SECONDS = Histogram(
    "limelight_insert_duration_seconds",
    "Time a request's events took to be stored: their INSERT, or the wait for and the "
    "INSERT of the group of small requests they joined.",
)
INGEST_BUFFER_BYTES = Gauge(
    "limelight_ingest_buffer_bytes",
    "Bytes of acknowledged events in the write-ahead log, not yet in the embedded engine.",
    multiprocess_mode="livesum",
)
INGEST_BUFFER_LAG = Gauge(
    "limelight_ingest_buffer_lag_seconds",
    "Seconds the oldest acknowledged event not yet in the embedded engine has waited.",
    multiprocess_mode="max",
)
INGEST_BUFFER_SEGMENTS = Gauge(
    "limelight_ingest_buffer_segments",
    "Write-ahead log segments holding events not yet in the embedded engine: more than "
    "one while a closed segment is being written and requests append to the next.",
    multiprocess_mode="livesum",
)
INGEST_BUFFER_REFUSED = Counter(
    "limelight_ingest_buffer_refused",
    "Small batches refused (503) because events wait for the engine beyond a bound, by "
    "reason: full, tenant_full (the environment's share), lagging, stopping.",
    ["reason"],
)
INGEST_BUFFER_FAILURES = Counter(
    "limelight_ingest_buffer_insert_failures",
    "INSERTs from the write-ahead log that the engine failed (each is tried again).",
)
INGEST_BUFFER_KEPT_ASIDE = Counter(
    "limelight_ingest_buffer_kept_aside_events",
    "Acknowledged events the engine refused to read, kept in the log's refused/ folder.",
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
# An evaluator that stopped going round shows here before alerts go unchecked.
ALERT_EVALUATOR_ROUNDS = Counter(
    "limelight_alert_evaluator_rounds",
    "Rounds of the alert evaluators: each claims the alerts due and checks them.",
)
ALERT_CHECK_SECONDS = Histogram(
    "limelight_alert_check_duration_seconds", "Time of one alert check."
)
NOTIFICATIONS = Counter(
    "limelight_notifications",
    "Alert notifications by destination kind (webhook, slack, email) and outcome: delivered, "
    "failed (tried and refused or unanswered), dropped (not sent: a quota, a bound, a stop).",
    ["kind", "outcome"],
)
NOTIFICATIONS_IN_FLIGHT = Gauge(
    "limelight_notifications_in_flight",
    "Alert notifications (per destination) waiting to be sent or being sent now.",
    multiprocess_mode="livesum",
)


# Read when /metrics is scraped (``store_sizes``), by the process that answers the scrape:
# each process would read the same stores, so their values are not added up.
EVENTS_DISK_BYTES = "limelight_events_disk_bytes"
EVENTS_DISK_HELP = (
    "Bytes of the events store's files: the embedded engine's data directory, or the "
    "parts of the events database on a ClickHouse server (system.parts, every replica)."
)
METADATA_DISK_BYTES = "limelight_metadata_disk_bytes"
METADATA_DISK_HELP = (
    "Bytes of the metadata database: the SQLite file and its write-ahead log, or "
    "PostgreSQL's pg_database_size."
)
# How long a reading of the stores' sizes serves scrapes, so that frequent scrapes
# (several Prometheus servers, a dashboard) do not each walk the engine's data directory
# or ask the servers: a directory of 60,000 events in 175 parts (3,630 files, merged
# parts not yet removed included) took 20-70 ms to walk on a busy 2-core machine.
STORE_SIZES_MAX_AGE = 5.0


@dataclass(frozen=True, slots=True)
class Reading:
    """A gauge measured when /metrics is scraped rather than kept up to date."""

    name: str
    documentation: str
    read: Callable[[], int | None]  # None: nothing to measure (an in-memory database)


class Readings:
    """Gauges read at scrape time, at most once every ``max_age`` seconds. A reading that
    fails is logged and left out of the scrape (Prometheus then shows the gauge absent),
    so a store that cannot answer does not take the rest of /metrics with it."""

    def __init__(
        self,
        readings: Sequence[Reading],
        max_age: float = STORE_SIZES_MAX_AGE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._readings = readings
        self._max_age = max_age
        self._clock = clock
        self._lock = threading.Lock()  # one reading at a time; concurrent scrapes share it
        self._values: dict[str, int | None] = {}
        self._read_at: float | None = None

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            now = self._clock()
            if self._read_at is None or now - self._read_at >= self._max_age:
                self._values = {r.name: _read(r) for r in self._readings}
                self._read_at = now
            values = dict(self._values)
        for reading in self._readings:
            value = values[reading.name]
            if value is not None:
                yield GaugeMetricFamily(reading.name, reading.documentation, value=value)


def _read(reading: Reading) -> int | None:
    try:
        return reading.read()
    except Exception:
        log.warning("could not read %s", reading.name, exc_info=True)
        return None


def store_sizes(events: Callable[[], int | None], metadata: Callable[[], int | None]) -> Readings:
    """The stores' bytes on disk, read when /metrics is scraped."""
    return Readings(
        [
            Reading(EVENTS_DISK_BYTES, EVENTS_DISK_HELP, events),
            Reading(METADATA_DISK_BYTES, METADATA_DISK_HELP, metadata),
        ]
    )


class _Together:
    """Several collectors as one, for ``generate_latest``."""

    def __init__(self, collectors: Iterable[Collector]) -> None:
        self._collectors = list(collectors)

    def collect(self) -> Iterator[Metric]:
        for collector in self._collectors:
            yield from collector.collect()


def exposition(*read_now: Collector) -> tuple[bytes, str]:
    """Every metric of the server (all its processes in multiprocess mode) and those of
    ``read_now``, and the content type to send them with."""
    counted: Collector = REGISTRY
    if os.environ.get(MULTIPROCESS_VARIABLE):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        counted = registry
    return generate_latest(_Together([counted, *read_now])), CONTENT_TYPE_LATEST


def process_exited(pid: int) -> None:
    """Drop a finished process's live gauges (multiprocess mode)."""
    if os.environ.get(MULTIPROCESS_VARIABLE):
        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]
