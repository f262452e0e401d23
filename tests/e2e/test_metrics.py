"""``/metrics``: what Limelight counts of itself, summed over every process of a scaled
server, and hidden from the addresses not allowed to read it."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests import web
from tests.support import LiveServer, launch

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(server: LiveServer) -> Samples:
    answer = web.get(f"{server.url}/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(answer.text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_a_scrape_after_traffic_shows_what_was_done(server: LiveServer) -> None:
    tenant = server.new_tenant()
    before = scrape(server)
    # Requests on new connections, so both processes of a scaled server take some.
    for _ in range(6):
        assert server.send(tenant.ingest_key, "metrics", [{"n": 1}, {"n": 2}]).status_code == 202
    partial = server.send(tenant.ingest_key, "metrics", [{"n": 3}, 4, [5]])
    assert partial.status_code == 400
    assert server.send("ll_pk_unknown", "metrics", [{"n": 1}]).status_code == 401
    headers = {"Authorization": tenant.admin_key}
    now = int(time.time() * 1000)
    run_query = {"calculations": [{"operator": "COUNT"}]}
    run = web.post(
        f"{server.url}/v1/query_run?wait=10",
        json={"query": run_query, "from": now - 60_000, "to": now + 60_000},
        headers=headers,
        timeout=30,  # longer than the server's wait
    )  # fmt: skip
    assert run.json()["query_run"]["status"] == "COMPLETED"
    span = {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
            "name": "GET /", "startTimeUnixNano": str(now * 1_000_000)}  # fmt: skip
    otlp = web.post(
        f"{server.url}/otel/v1/traces",
        json={"resourceSpans": [{"scopeSpans": [{"spans": [span, {**span, "spanId": "00"}]}]}]},
        headers={"x-api-key": tenant.ingest_key},
    )
    assert otlp.status_code == 200
    query = web.post(f"{server.url}/v1/queries", json=run_query, headers=headers)
    alert = {"name": "any", "query_id": query.json()["query"]["id"],
             "threshold": {"operation": ">", "value": 0}}  # fmt: skip
    assert web.post(f"{server.url}/v1/alerts", json=alert, headers=headers).status_code == 200
    # A request is counted as its response ends: in another process than the scrape's,
    # a moment after the client has it.
    # An alert is checked within a few seconds of its creation.
    deadline = time.monotonic() + 20
    while True:
        try:
            _check_counts(before, scrape(server))
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _check_counts(before: Samples, after: Samples) -> None:
    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    route = "/events/v1/{dataset}"
    assert grew("limelight_http_requests_total", route=route, method="POST", status="202") == 6
    assert grew("limelight_http_requests_total", route=route, method="POST", status="400") == 1
    assert grew("limelight_http_requests_total", route=route, method="POST", status="401") == 1
    assert grew("limelight_ingest_events_total", api="events", outcome="accepted") == 13
    assert grew("limelight_ingest_events_total", api="events", outcome="not_an_object") == 2
    body = len(b'[{"n":1},{"n":2}]')
    assert grew("limelight_ingest_bytes_total", api="events", outcome="accepted") == 6 * body
    assert grew("limelight_ingest_bytes_total", api="events", outcome="partial") == len(
        b'[{"n":3},4,[5]]'
    )
    assert grew("limelight_insert_duration_seconds_count") == 8  # 7 batches and the OTLP one
    assert grew("limelight_query_run_duration_seconds_count", status="COMPLETED") == 1
    assert grew("limelight_http_requests_total", route="/v1/query_run", method="POST",
                status="200") == 1  # fmt: skip
    assert grew("limelight_ingest_events_total", api="otlp", outcome="accepted") == 1
    assert grew("limelight_ingest_events_total", api="otlp", outcome="invalid") == 1
    assert grew("limelight_alert_checks_total", state="ALARM") >= 1
    assert value(after, "limelight_query_runs_waiting") == 0
    # Every reason the run queue refuses for is there from the start.
    for reason in ("stopping", "workspace_queue_full", "queue_full"):
        assert ("limelight_query_runs_refused_total", frozenset({("reason", reason)})) in after
    assert value(after, "limelight_otlp_requests_in_flight") == 0


def wait_for(server: LiveServer, check: Callable[[Samples], None], seconds: float = 30) -> None:
    """Scrape until ``check`` passes: a count made by another process than the scrape's
    shows a moment after the client has its answer, a store's size within the seconds a
    reading of it is kept."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            check(scrape(server))
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_events_are_counted_by_ingest_path_once_stored(server: LiveServer) -> None:
    tenant = server.new_tenant()
    otlp = {"x-api-key": tenant.ingest_key}
    now_ns = str(time.time_ns())
    span = {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
            "name": "GET /", "startTimeUnixNano": now_ns}  # fmt: skip
    traces = {"resourceSpans": [{"scopeSpans": [{"spans": [span] * 3}]}]}
    record = {"timeUnixNano": now_ns, "body": {"stringValue": "hello"}}
    logs = {"resourceLogs": [{"scopeLogs": [{"logRecords": [record] * 2}]}]}
    point = {"timeUnixNano": now_ns, "asDouble": 1.5}
    gauge = {"name": "queue.depth", "gauge": {"dataPoints": [point]}}
    data_points = {"resourceMetrics": [{"scopeMetrics": [{"metrics": [gauge]}]}]}
    before = scrape(server)

    assert server.send(tenant.ingest_key, "stored", [{"n": 1}] * 5).status_code == 202
    # Two of three stored: the 400 lists the one refused.
    assert server.send(tenant.ingest_key, "stored", [{"n": 2}, 3, {"n": 4}]).status_code == 400
    # Refused whole: nothing stored, nothing counted.
    assert server.send("ll_pk_unknown", "stored", [{"n": 5}]).status_code == 401
    refused = web.post(f"{server.events_url}/v1/stored", content=b"[{", headers=otlp)
    assert refused.status_code == 400
    for signal, body in (("traces", traces), ("logs", logs), ("metrics", data_points)):
        answer = web.post(f"{server.url}/otel/v1/{signal}", json=body, headers=otlp)
        assert answer.status_code == 200, answer.text
    assert web.post(f"{server.url}/otel/v1/logs", json=logs, headers={}).status_code == 401

    def counted(after: Samples) -> None:
        grown = {
            path: value(after, "limelight_events_stored_total", api=path)
            - value(before, "limelight_events_stored_total", api=path)
            for path in ("events", "otlp_traces", "otlp_logs", "otlp_metrics")
        }
        assert grown == {"events": 7, "otlp_traces": 3, "otlp_logs": 2, "otlp_metrics": 1}

    wait_for(server, counted)
    # What was counted is what a reader finds.
    assert len(server.read(tenant.admin_key)) == 13


MB = 1_000_000


def test_the_stores_bytes_on_disk_are_read_when_scraped(
    server: LiveServer, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Events of random text (which the engine cannot compress), and a query run whose
    result (kept in the metadata database) holds them, grow both stores' gauges.

    Embedded, on a server of its own: the shared server's SQLite file and write-ahead
    log reuse the space other tests' deleted rows and checkpoints left free, and once
    took this run's result without growing (the gauge, which sums their sizes, stayed
    at 5,193,328 bytes)."""
    if request.node.callspec.params["server"] == "embedded":
        server = launch(tmp_path / "data")
        request.addfinalizer(server.stop)
    tenant = server.new_tenant()
    before = scrape(server)
    events_before = before[("limelight_events_disk_bytes", frozenset())]
    metadata_before = before[("limelight_metadata_disk_bytes", frozenset())]
    assert events_before > 0 and metadata_before > 0
    now = int(time.time() * 1000)
    # 1,000 events of 2 kB of random hex (2 MB; stored twice, as text and as JSON).
    events = [{"timestamp": now - n, "pad": secrets.token_hex(1000)} for n in range(1000)]
    assert server.send(tenant.ingest_key, "sized", events).status_code == 202
    run = web.post(
        f"{server.url}/v1/query_run?wait=20",
        json={"query": {}, "limit": 1000, "from": now - 60_000, "to": now + 60_000},
        headers={"Authorization": tenant.admin_key},
        timeout=60,
    )
    assert run.json()["query_run"]["status"] == "COMPLETED"
    assert len(run.json()["data"]["events"]) == 1000

    def grown(after: Samples) -> None:
        events_after = after[("limelight_events_disk_bytes", frozenset())]
        metadata_after = after[("limelight_metadata_disk_bytes", frozenset())]
        assert events_after - events_before >= 2 * MB
        assert metadata_after - metadata_before >= 1 * MB

    wait_for(server, grown)


def test_other_addresses_get_404(tmp_path: Path) -> None:
    """Loopback may read by default; a setting naming other networks leaves it out, and a
    client behind a trusted proxy is judged by its own address."""
    server = launch(
        tmp_path / "data",
        {
            "LIMELIGHT_METRICS_ALLOW": "10.0.0.0/8,127.0.0.1",
            "LIMELIGHT_TRUSTED_PROXIES": "127.0.0.1",
        },
    )
    nobody = launch(tmp_path / "nobody", {"LIMELIGHT_METRICS_ALLOW": "10.0.0.0/8"})
    try:
        assert web.get(f"{server.url}/metrics").status_code == 200
        via_proxy = web.get(f"{server.url}/metrics", headers={"X-Forwarded-For": "203.0.113.7"})
        assert via_proxy.status_code == 404
        assert via_proxy.json() == {"message": "Not Found"}
        allowed = web.get(f"{server.url}/metrics", headers={"X-Forwarded-For": "10.1.2.3"})
        assert allowed.status_code == 200
        assert web.get(f"{nobody.url}/metrics").status_code == 404
    finally:
        server.stop()
        nobody.stop()
