"""The official OpenTelemetry Python SDK, with its OTLP/HTTP exporters, against the server.

The Python SDK exports protobuf only (it has no OTLP JSON exporter); the JSON
encoding is covered in test_otel_http.py.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry._logs import SeverityNumber
from opentelemetry.context import get_current
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

from tests import web
from tests.support import LiveServer, Tenant

MS = 1_000_000


@pytest.fixture(scope="module")
def tenant(server: LiveServer) -> Tenant:
    """One tenant for the module (creating one takes seconds); each test has its dataset."""
    return server.new_tenant()


def run(server: LiveServer, tenant: Tenant, query: dict[str, Any]) -> dict[str, Any]:
    """A query run over the last hour, through the query-run API; its ``data``."""
    now = int(time.time() * 1000)
    body = {"query": query, "from": now - 3_600_000, "to": now + 60_000, "limit": 1000}
    with web.Client(
        base_url=server.url, headers={"Authorization": tenant.admin_key}, timeout=30
    ) as client:
        created = client.post("/v1/query_run", json=body)
        assert created.status_code == 200, created.text
        run_id = created.json()["query_run"]["id"]
        result = client.get(f"/v1/query_run/{run_id}", params={"wait": 15}).json()
    assert result["query_run"]["status"] == "COMPLETED", result
    data: dict[str, Any] = result["data"]
    return data


def stored(server: LiveServer, tenant: Tenant, dataset: str, **query: Any) -> list[dict[str, Any]]:
    """The events of one dataset (with their system fields) that match ``query``."""
    namespaces = [{"type": "dataset", "value": dataset}]
    events: list[dict[str, Any]] = run(server, tenant, {"namespaces": namespaces, **query})[
        "events"
    ]
    return events


def by_name(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in events}


def otlp_headers(tenant: Tenant, dataset: str | None = None) -> dict[str, str]:
    headers = {"x-api-key": tenant.ingest_key}
    if dataset:
        headers["x-dataset"] = dataset
    return headers


def record_spans(resource: Resource) -> list[ReadableSpan]:
    """A server span with a failing client child, at fixed times, kept in memory."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("shop.checkout", "2.1.0")
    start = time.time_ns() - 5_000 * MS
    parent = tracer.start_span(
        "POST /checkout",
        kind=SpanKind.SERVER,
        start_time=start,
        attributes={"http.request.method": "POST", "http.response.status_code": 500},
    )
    child = tracer.start_span(
        "charge card",
        context=set_span_in_context(parent),
        kind=SpanKind.CLIENT,
        start_time=start + 10 * MS,
        attributes={"payment.provider": "acme", "payment.amount": 12.5, "retry": False},
    )
    child.add_event("attempt", {"attempt.number": 1}, timestamp=start + 11 * MS)
    child.record_exception(TimeoutError("card network timeout"), timestamp=start + 30 * MS)
    child.set_status(Status(StatusCode.ERROR, "card network timeout"))
    child.end(end_time=start + 35 * MS)
    parent.end(end_time=start + 40 * MS)
    provider.shutdown()
    return list(memory.get_finished_spans())


def export_spans(server: LiveServer, tenant: Tenant, spans: list[ReadableSpan], **kw: Any) -> None:
    exporter = OTLPSpanExporter(endpoint=f"{server.url}/otel/v1/traces", timeout=20, **kw)
    try:
        assert exporter.export(spans) is SpanExportResult.SUCCESS
    finally:
        exporter.shutdown()


def test_traces_are_stored_as_one_event_per_span(server: LiveServer, tenant: Tenant) -> None:
    resource = Resource.create(
        {"service.name": "checkout", "service.namespace": "shop", "deployment.environment": "e2e"}
    )
    spans = record_spans(resource)
    export_spans(server, tenant, spans, headers=otlp_headers(tenant))

    events = by_name(stored(server, tenant, "otel"))
    assert set(events) == {"POST /checkout", "charge card"}
    parent, child = events["POST /checkout"], events["charge card"]
    sent = {s.name: s for s in spans}
    for name, event in events.items():
        ctx = sent[name].get_span_context()
        assert event["traceId"] == f"{ctx.trace_id:032x}"
        assert event["spanId"] == f"{ctx.span_id:016x}"
        assert event["_service"] == "checkout"
        assert event["_namespace"] == "shop"
        assert event["_dataset"] == "otel"
        assert event["_timestamp"] == sent[name].start_time // MS
        service = event["resource"]["service"]
        assert (service["name"], service["namespace"]) == ("checkout", "shop")
        assert event["resource"]["deployment"] == {"environment": "e2e"}
        assert event["resource"]["telemetry"]["sdk"]["language"] == "python"
        assert event["scope"] == {"name": "shop.checkout", "version": "2.1.0"}
    assert "parentSpanId" not in parent
    assert child["parentSpanId"] == parent["spanId"]
    assert child["traceId"] == parent["traceId"]
    assert parent["duration"] == 40.0
    assert child["duration"] == 25.0
    assert (parent["kind"], child["kind"]) == ("SERVER", "CLIENT")
    assert parent["attributes"] == {
        "http": {"request": {"method": "POST"}, "response": {"status_code": 500}}
    }
    assert child["attributes"] == {"payment": {"provider": "acme", "amount": 12.5}, "retry": False}
    assert child["status"] == {"code": "ERROR", "message": "card network timeout"}
    assert child["error"] == "card network timeout"
    assert "error" not in parent
    attempt, exception = child["events"]
    assert attempt["name"] == "attempt" and attempt["attributes"] == {"attempt": {"number": 1}}
    assert exception["name"] == "exception"
    assert exception["attributes"]["exception"]["type"] == "TimeoutError"


def test_spans_answer_queries_by_trace_service_and_attribute(
    server: LiveServer, tenant: Tenant
) -> None:
    resource = Resource.create({"service.name": "orders", "service.namespace": "shop"})
    spans = record_spans(resource)
    export_spans(server, tenant, spans, headers=otlp_headers(tenant, "traces-q"))
    trace_id = f"{spans[0].get_span_context().trace_id:032x}"
    parent_id = f"{next(s for s in spans if s.parent is None).get_span_context().span_id:016x}"

    # COUNT and duration per span name within one trace.
    data = run(
        server,
        tenant,
        {
            "namespaces": [{"type": "service", "value": "orders"}],
            "calculations": [{"operator": "COUNT"}, {"operator": "MAX", "key": "duration"}],
            "filters": [{"key": "traceId", "operation": "=", "value": trace_id}],
            "group_bys": [{"key": "name"}],
        },
    )
    per_name = {a["groups"]["name"]: a["values"] for a in data["aggregates"]}
    assert per_name == {
        "POST /checkout": {"COUNT": 1, "MAX(duration)": 40, "_count": 1},
        "charge card": {"COUNT": 1, "MAX(duration)": 25, "_count": 1},
    }

    # The children of a span, a nested attribute, the error spans.
    [child] = stored(
        server,
        tenant,
        "traces-q",
        filters=[{"key": "parentSpanId", "operation": "=", "value": parent_id}],
    )
    assert child["name"] == "charge card" and child["traceId"] == trace_id
    by_attribute = stored(
        server,
        tenant,
        "traces-q",
        filters=[{"key": "attributes.payment.provider", "operation": "=", "value": "acme"}],
    )
    assert [e["name"] for e in by_attribute] == ["charge card"]
    errors = stored(server, tenant, "traces-q", filters=[{"key": "error", "operation": "EXISTS"}])
    assert [(e["name"], e["error"]) for e in errors] == [("charge card", "card network timeout")]
    assert {e["_namespace"] for e in stored(server, tenant, "traces-q")} == {"shop"}


def test_gzip_export_and_namespace_falling_back_to_the_service(
    server: LiveServer, tenant: Tenant
) -> None:
    spans = record_spans(Resource.create({"service.name": "billing"}))
    export_spans(
        server,
        tenant,
        spans,
        headers=otlp_headers(tenant, "traces-gz"),
        compression=Compression.Gzip,
    )
    events = stored(server, tenant, "traces-gz")
    assert len(events) == 2
    assert {(e["_service"], e["_namespace"]) for e in events} == {("billing", "billing")}


@pytest.fixture()
def log_provider(server: LiveServer, tenant: Tenant) -> Iterator[LoggerProvider]:
    provider = LoggerProvider(resource=Resource.create({"service.name": "payments"}))
    exporter = OTLPLogExporter(
        endpoint=f"{server.url}/otel/v1/logs", headers=otlp_headers(tenant, "logs"), timeout=20
    )
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    yield provider
    provider.shutdown()


def test_logs_through_the_logs_api(
    server: LiveServer, tenant: Tenant, log_provider: LoggerProvider
) -> None:
    logger = log_provider.get_logger("payments.worker", "3.0")
    tracer = TracerProvider().get_tracer("t")
    with tracer.start_as_current_span("handle payment") as span:
        logger.emit(
            severity_number=SeverityNumber.ERROR,
            severity_text="ERROR",
            body="payment p-17 failed",
            attributes={"order.id": 42, "user": "ann"},
            context=get_current(),
        )
        ctx = span.get_span_context()
    logger.emit(severity_number=SeverityNumber.INFO, body={"step": "settled", "items": [1, 2]})
    assert log_provider.force_flush()

    events = stored(server, tenant, "logs")
    assert len(events) == 2
    [failed] = [e for e in events if e["message"] == "payment p-17 failed"]
    [settled] = [e for e in events if "body" in e]
    assert failed["severityText"] == "ERROR"
    assert failed["severityNumber"] == 17
    assert failed["level"] == "error"
    assert failed["traceId"] == f"{ctx.trace_id:032x}"
    assert failed["spanId"] == f"{ctx.span_id:016x}"
    assert failed["attributes"] == {"order": {"id": 42}, "user": "ann"}
    assert failed["scope"] == {"name": "payments.worker", "version": "3.0"}
    assert failed["_service"] == "payments" and failed["_namespace"] == "payments"
    assert abs(failed["_timestamp"] - time.time() * 1000) < 60_000
    assert settled["body"] == {"step": "settled", "items": [1, 2]}
    assert settled["level"] == "info" and settled["severityNumber"] == 9
    assert "traceId" not in settled


def test_metrics_one_event_per_data_point(server: LiveServer, tenant: Tenant) -> None:
    exporter = OTLPMetricExporter(
        endpoint=f"{server.url}/otel/v1/metrics",
        headers=otlp_headers(tenant, "metrics"),
        timeout=20,
    )
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=3_600_000)
    provider = MeterProvider(
        resource=Resource.create({"service.name": "shop", "service.namespace": "retail"}),
        metric_readers=[reader],
    )
    meter = provider.get_meter("shop.metrics", "1.0")
    orders = meter.create_counter("orders.placed", unit="{order}", description="Orders placed")
    orders.add(2, {"payment.method": "card"})
    orders.add(1, {"payment.method": "cash"})
    latency = meter.create_histogram("http.server.duration", unit="ms")
    for value in (3, 30, 300):
        latency.record(value, {"http.route": "/checkout"})

    def queue_depth(_: CallbackOptions) -> list[Observation]:
        return [Observation(7.5, {"queue": "emails"})]

    meter.create_observable_gauge("queue.depth", [queue_depth], unit="{item}")
    meter.create_up_down_counter("jobs.running").add(-3)
    try:
        assert provider.force_flush(20_000)
        events = stored(server, tenant, "metrics")
    finally:
        provider.shutdown()  # exports once more, after the reading

    sums = [e for e in events if e["type"] == "sum"]
    counters = {e["attributes"]["payment"]["method"]: e for e in sums if "attributes" in e}
    assert {k: v["value"] for k, v in counters.items()} == {"card": 2, "cash": 1}
    card = counters["card"]
    assert card["name"] == "orders.placed"
    assert card["unit"] == "{order}"
    assert card["description"] == "Orders placed"
    assert card["monotonic"] is True
    assert card["temporality"] == "CUMULATIVE"
    [hist] = [e for e in events if e["type"] == "histogram"]
    assert hist["name"] == "http.server.duration" and hist["unit"] == "ms"
    assert (hist["count"], hist["sum"], hist["min"], hist["max"]) == (3, 333, 3, 300)
    bounds, counts = hist["buckets"]["bounds"], hist["buckets"]["counts"]
    assert len(counts) == len(bounds) + 1 and sum(counts) == 3
    assert counts[bounds.index(5.0)] == 1  # 3 falls in (0, 5]
    assert hist["attributes"] == {"http": {"route": "/checkout"}}
    [gauge] = [e for e in events if e["type"] == "gauge"]
    assert gauge["name"] == "queue.depth" and gauge["value"] == 7.5
    [running] = [e for e in sums if e["name"] == "jobs.running"]
    assert running["value"] == -3 and running["monotonic"] is False
    for event in events:
        assert (event["_service"], event["_namespace"]) == ("shop", "retail")
        assert event["scope"] == {"name": "shop.metrics", "version": "1.0"}
    assert len(events) == 5
