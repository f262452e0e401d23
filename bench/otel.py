"""OTLP ingest: spans per second through ``/otel/v1/traces`` beside the Events API, and
log records and metric data points through ``/otel/v1/logs`` and ``/otel/v1/metrics``.

The same spans go three ways in the same run, with the same concurrency:

- otlp: protobuf ExportTraceServiceRequest bodies of 512 spans (the SDK's
  default batch size), as an OpenTelemetry SDK or collector sends them;
- events: the very events those spans become, as JSON arrays of 512 posted to
  the Events API, so both paths store the same content;
- direct: the rows the server makes of those spans, inserted into an engine of the
  bench's own process, one INSERT a request: what the engine alone costs.

An HTTP run ends once a read of the tenant has returned: small batches wait in the
server's write-ahead log until written, and a read waits for them.

Spans look like real HTTP services: server spans with client and database
children, semantic-convention attributes, resources with SDK and host details,
a few exceptions. Log records (512 per request) are request logs with a trace
context; metric requests hold 512 data points (counters, gauges, histograms).
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import SeverityNumber
from opentelemetry.proto.metrics.v1.metrics_pb2 import AggregationTemporality
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, Span, Status

from bench.ingest import Batch, HttpPath, HttpSender, run_concurrently
from limelight.ingest.batch import IngestLimits
from limelight.ingest.otlp.codec import Encoding
from limelight.ingest.otlp.common import Rejections
from limelight.ingest.otlp.service import otlp_rows
from limelight.ingest.otlp.signals import TRACES
from limelight.ingest.otlp.spans import map_spans
from limelight.ingest.service import Origin
from limelight.store.events.base import EventRow
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.tenant import Tenant

if TYPE_CHECKING:
    from bench.run import BenchContext

CLIENTS = 4
SPANS_PER_BATCH = 512
SPANS_PER_TRACE = 8
SERVICES = ["checkout", "orders", "users", "gateway"]
ROUTES = ["/api/orders", "/api/orders/{id}", "/api/users/{id}", "/api/cart", "/health"]
METHODS = ["GET", "GET", "GET", "POST", "PUT", "DELETE"]
AGENTS = [
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36",
    "okhttp/4.12.0",
]
STATEMENTS = [
    "SELECT * FROM orders WHERE id = $1",
    "UPDATE carts SET items = $1 WHERE user_id = $2",
    "SELECT id, email, plan FROM users WHERE id = $1",
]


def kv(key: str, value: str | int | bool) -> KeyValue:
    item = KeyValue(key=key)
    if isinstance(value, bool):
        item.value.bool_value = value
    elif isinstance(value, int):
        item.value.int_value = value
    else:
        item.value.string_value = value
    return item


def resource_spans(rng: random.Random, service: str) -> ResourceSpans:
    rs = ResourceSpans()
    rs.resource.attributes.extend(
        [
            kv("service.name", service),
            kv("service.namespace", "shop"),
            kv("service.version", "1.14.2"),
            kv("deployment.environment", "production"),
            kv("host.name", f"ip-10-0-{rng.randint(0, 9)}-{rng.randint(1, 250)}"),
            kv("k8s.pod.name", f"{service}-{rng.getrandbits(32):08x}"),
            kv("telemetry.sdk.name", "opentelemetry"),
            kv("telemetry.sdk.language", "python"),
            kv("telemetry.sdk.version", "1.45.2"),
        ]
    )
    scope = rs.scope_spans.add()
    scope.scope.name = "opentelemetry.instrumentation.asgi"
    scope.scope.version = "0.66b2"
    return rs


def add_trace(rng: random.Random, spans: list[Span], start_ns: int) -> None:
    """A server span and its children: HTTP client calls and database queries."""
    trace_id = rng.randbytes(16)
    root_id = rng.randbytes(8)
    method, route = rng.choice(METHODS), rng.choice(ROUTES)
    status = rng.choice([200, 200, 200, 201, 204, 400, 404, 500])
    duration = int(rng.lognormvariate(17, 1))  # about 25ms, long tail
    root = Span(
        trace_id=trace_id,
        span_id=root_id,
        name=f"{method} {route}",
        kind=Span.SPAN_KIND_SERVER,
        start_time_unix_nano=start_ns,
        end_time_unix_nano=start_ns + duration,
    )
    root.attributes.extend(
        [
            kv("http.request.method", method),
            kv("http.route", route),
            kv("url.path", route.replace("{id}", str(rng.randint(1, 99_999)))),
            kv("url.scheme", "https"),
            kv("http.response.status_code", status),
            kv("server.address", "api.example.com"),
            kv("client.address", f"203.0.113.{rng.randint(1, 254)}"),
            kv("user_agent.original", rng.choice(AGENTS)),
            kv("enduser.id", str(rng.randint(1, 50_000))),
        ]
    )
    if status >= 500:
        root.status.code = Status.STATUS_CODE_ERROR
        event = root.events.add(name="exception", time_unix_nano=start_ns + duration // 2)
        event.attributes.extend(
            [
                kv("exception.type", "TimeoutError"),
                kv("exception.message", "upstream timed out"),
                kv("exception.stacktrace", 'Traceback (most recent call last):\n  File "app.py"'),
            ]
        )
    spans.append(root)
    for i in range(SPANS_PER_TRACE - 1):
        child_start = start_ns + duration * i // SPANS_PER_TRACE
        child = Span(
            trace_id=trace_id,
            span_id=rng.randbytes(8),
            parent_span_id=root_id,
            start_time_unix_nano=child_start,
            end_time_unix_nano=child_start + duration // (SPANS_PER_TRACE + 1),
        )
        if i % 2:
            child.name = "SELECT shop"
            child.kind = Span.SPAN_KIND_CLIENT
            child.attributes.extend(
                [
                    kv("db.system", "postgresql"),
                    kv("db.name", "shop"),
                    kv("db.statement", rng.choice(STATEMENTS)),
                    kv("server.address", "db.internal"),
                    kv("server.port", 5432),
                ]
            )
        else:
            child.name = f"GET {rng.choice(SERVICES)}"
            child.kind = Span.SPAN_KIND_CLIENT
            child.attributes.extend(
                [
                    kv("http.request.method", "GET"),
                    kv("url.full", f"http://{rng.choice(SERVICES)}.internal/v1/items"),
                    kv("http.response.status_code", 200),
                    kv("cache.hit", rng.random() < 0.7),
                ]
            )
        spans.append(child)


@dataclass
class Work:
    otlp: list[Batch]  # protobuf bodies
    events: list[Batch]  # the same spans as Events API bodies
    spans: int


def make_work(batches: int, seed: int = 11) -> Work:
    rng = random.Random(seed)
    start = time.time_ns() - 3_600 * 10**9
    otlp, events = [], []
    for b in range(batches):
        spans: list[Span] = []
        while len(spans) < SPANS_PER_BATCH:
            add_trace(rng, spans, start + (b * SPANS_PER_BATCH + len(spans)) * 1_000_000)
        request = ExportTraceServiceRequest()
        rs = resource_spans(rng, SERVICES[b % len(SERVICES)])
        rs.scope_spans[0].spans.extend(spans[:SPANS_PER_BATCH])
        request.resource_spans.append(rs)
        otlp.append(Batch(request.SerializeToString(), []))
        mapped = map_spans(request, Rejections())[0].events
        events.append(Batch(b"[" + b",".join(orjson.dumps(e) for e in mapped) + b"]", []))
    return Work(otlp, events, batches * SPANS_PER_BATCH)


def _scope(resources: Any, scopes: str, rng: random.Random, batch: int, name: str) -> Any:
    """One scope named ``name`` of a new resource, the service of batch ``batch``'s."""
    entry = resources.add()
    entry.resource.CopyFrom(resource_spans(rng, SERVICES[batch % len(SERVICES)]).resource)
    scope = getattr(entry, scopes).add()
    scope.scope.name = name
    return scope


def make_logs(batches: int, seed: int = 12) -> list[Batch]:
    """Request logs of the same services, 512 records per body, each in a trace."""
    rng = random.Random(seed)
    start = time.time_ns() - 3_600 * 10**9
    out = []
    for b in range(batches):
        request = ExportLogsServiceRequest()
        scope = _scope(request.resource_logs, "scope_logs", rng, b, "app.requests")
        for i in range(SPANS_PER_BATCH):
            method, route = rng.choice(METHODS), rng.choice(ROUTES)
            status = rng.choice([200, 200, 200, 201, 204, 400, 404, 500])
            record = scope.log_records.add(
                time_unix_nano=start + (b * SPANS_PER_BATCH + i) * 1_000_000,
                severity_number=SeverityNumber.SEVERITY_NUMBER_ERROR
                if status >= 500
                else SeverityNumber.SEVERITY_NUMBER_INFO,
                severity_text="ERROR" if status >= 500 else "INFO",
                trace_id=rng.randbytes(16),
                span_id=rng.randbytes(8),
            )
            record.body.string_value = f"{method} {route} completed with {status}"
            record.attributes.extend(
                [
                    kv("http.request.method", method),
                    kv("http.route", route),
                    kv("http.response.status_code", status),
                    kv("enduser.id", str(rng.randint(1, 50_000))),
                    kv("duration_ms", rng.randint(1, 900)),
                ]
            )
        out.append(Batch(request.SerializeToString(), []))
    return out


def make_metrics(batches: int, seed: int = 13) -> list[Batch]:
    """512 data points per body: request counters, memory gauges, latency histograms."""
    rng = random.Random(seed)
    start = time.time_ns() - 3_600 * 10**9
    bounds = [5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0]
    out = []
    for b in range(batches):
        request = ExportMetricsServiceRequest()
        scope = _scope(request.resource_metrics, "scope_metrics", rng, b, "app.metrics")
        counter = scope.metrics.add(name="http.server.requests", unit="1")
        counter.sum.aggregation_temporality = AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA
        counter.sum.is_monotonic = True
        gauge = scope.metrics.add(name="process.memory.usage", unit="By")
        histogram = scope.metrics.add(name="http.server.request.duration", unit="ms")
        histogram.histogram.aggregation_temporality = (
            AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA
        )
        at = start + b * 60 * 10**9
        for i in range(SPANS_PER_BATCH):
            route = ROUTES[i % len(ROUTES)]
            attributes = [kv("http.route", route), kv("instance", f"pod-{i % 40}")]
            kind = i % 3
            if kind == 0:
                point = counter.sum.data_points.add(time_unix_nano=at, as_int=rng.randint(0, 500))
            elif kind == 1:
                point = gauge.gauge.data_points.add(
                    time_unix_nano=at, as_double=rng.uniform(1e8, 9e8)
                )
            else:
                counts = [rng.randint(0, 40) for _ in range(len(bounds) + 1)]
                point = histogram.histogram.data_points.add(
                    time_unix_nano=at,
                    count=sum(counts),
                    sum=rng.uniform(100, 9000),
                    bucket_counts=counts,
                    explicit_bounds=bounds,
                )
            point.attributes.extend(attributes)
        out.append(Batch(request.SerializeToString(), []))
    return out


SIGNALS = {
    # path: (how the answer tells rejected items)
    "traces": lambda body: ExportTraceServiceResponse.FromString(body).partial_success,
    "logs": lambda body: ExportLogsServiceResponse.FromString(body).partial_success,
    "metrics": lambda body: ExportMetricsServiceResponse.FromString(body).partial_success,
}


class OtlpPath(HttpSender):
    """POSTs protobuf bodies to /otel/v1/<signal>."""

    def __init__(self, url: str, key: str, dataset: str, signal: str = "traces") -> None:
        super().__init__(
            f"{url}/otel/v1/{signal}",
            {"x-api-key": key, "x-dataset": dataset, "content-type": "application/x-protobuf"},
        )
        self.signal = signal

    def send(self, batch: Batch) -> None:
        partial = SIGNALS[self.signal](self.post(batch))
        if partial.error_message:
            raise RuntimeError(partial.error_message)


def run(ctx: BenchContext) -> None:
    batches = 20 if ctx.quick else 160
    work = make_work(batches)
    otlp_mb = sum(len(b.body) for b in work.otlp) / 1e6
    events_mb = sum(len(b.body) for b in work.events) / 1e6
    print(
        f"{work.spans:,} spans in {batches} batches of {SPANS_PER_BATCH}, {CLIENTS} clients; "
        f"protobuf {otlp_mb:.1f}MB, as events JSON {events_mb:.1f}MB "
        f"({events_mb * 1e6 / work.spans:.0f} bytes per event)"
    )
    url, key = ctx.server.url, ctx.tenant.ingest_key
    paths = {
        "otlp": lambda i: OtlpPath(url, key, f"bench-otlp-{i}"),
        "events": lambda i: HttpPath(f"{url}/events", key, f"bench-otlp-events-{i}"),
        "logs": lambda i: OtlpPath(url, key, f"bench-otlp-logs-{i}", "logs"),
        "metrics": lambda i: OtlpPath(url, key, f"bench-otlp-metrics-{i}", "metrics"),
    }
    bodies = {
        "otlp": work.otlp,
        "events": work.events,
        "logs": make_logs(batches),
        "metrics": make_metrics(batches),
    }
    # The rows the server stores for the spans, inserted into an engine of this process
    # with the same concurrency: what the engine alone takes for them.
    tenant = Tenant(ctx.tenant.workspace_id, ctx.tenant.environment_id)
    origin = Origin(tenant, "bench-otlp-direct", redact_secrets=False)
    limits = IngestLimits(
        max_event_bytes=256 * 1024, max_events=100_000, max_stored_bytes=64 * 1024 * 1024
    )
    direct_rows: dict[int, list[EventRow]] = {}
    for n, batch in enumerate(work.otlp):
        direct_rows[n] = otlp_rows(TRACES, origin, batch.body, Encoding.PROTOBUF, limits)[0]
    direct_work = [Batch(b"", [], tenant=n) for n in direct_rows]
    direct = ChdbEventStore(ctx.scratch("otel-direct-chdb"))
    direct.start()
    times: dict[str, list[float]] = {name: [] for name in [*paths, "direct"]}
    try:
        for i in range(ctx.repeats):
            # Alternate the order so neither path always runs on a warmer engine.
            for name in [*paths, "direct"] if i % 2 == 0 else reversed([*paths, "direct"]):
                if name == "direct":
                    times[name].append(
                        run_concurrently(
                            direct_work,
                            CLIENTS,
                            lambda b: direct.insert(tenant, direct_rows[b.tenant]),
                        )
                    )
                    continue
                path = paths[name](i)
                try:
                    seconds = run_concurrently(bodies[name], CLIENTS, path.send)
                    # Until the items are readable: a read waits for what the server's
                    # write-ahead log still holds of the tenant.
                    started = time.perf_counter()
                    ctx.server.read(ctx.tenant.admin_key, limit=1)
                    times[name].append(seconds + time.perf_counter() - started)
                finally:
                    path.close()
    finally:
        direct.close()
    head = f"{'path':<36}{'items':>9}{'MB':>7}{'median s':>10}{'min s':>8}{'items/s':>10}"
    print(head)
    print("-" * len(head))
    labels = {
        "otlp": "OTLP /otel/v1/traces (protobuf)",
        "events": "Events API (same events as JSON)",
        "logs": "OTLP /otel/v1/logs (log records)",
        "metrics": "OTLP /otel/v1/metrics (data points)",
        "direct": "direct INSERT of the spans' rows",
    }
    rate = {}
    for name, label in labels.items():
        median = statistics.median(times[name])
        rate[name] = work.spans / median
        mb = sum(len(b.body) for b in bodies.get(name, work.otlp)) / 1e6
        print(
            f"{label:<36}{work.spans:>9,}{mb:>7.1f}{median:>10.2f}"
            f"{min(times[name]):>8.2f}{rate[name]:>10,.0f}"
        )
    print(f"spans/s over events/s: {rate['otlp'] / rate['events']:.2f}")
    print(f"spans/s over the direct INSERT's: {rate['otlp'] / rate['direct']:.2f} (target >= 0.7)")
