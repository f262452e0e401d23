"""Small builders for OTLP protobuf requests in tests."""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.metrics.v1.metrics_pb2 import Metric
from opentelemetry.proto.trace.v1.trace_pb2 import Span

TRACE_ID = bytes.fromhex("5b8efff798038103d269b633813fc60c")
SPAN_ID = bytes.fromhex("eee19b7ec3c1b174")
PARENT_ID = bytes.fromhex("eee19b7ec3c1b173")
T0 = 1_700_000_000_123_456_789


def value(v: Any) -> AnyValue:
    if isinstance(v, bool):
        return AnyValue(bool_value=v)
    if isinstance(v, int):
        return AnyValue(int_value=v)
    if isinstance(v, float):
        return AnyValue(double_value=v)
    if isinstance(v, bytes):
        return AnyValue(bytes_value=v)
    if isinstance(v, list):
        out = AnyValue()
        out.array_value.values.extend(value(x) for x in v)
        return out
    if isinstance(v, dict):
        out = AnyValue()
        out.kvlist_value.values.extend(kvs(v))
        return out
    return AnyValue(string_value=v)


def kvs(attrs: dict[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=k, value=value(v)) for k, v in attrs.items()]


def traces(
    spans: list[Span], resource: dict[str, Any] | None = None, scope: str = "tests"
) -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.extend(kvs(resource or {}))
    ss = rs.scope_spans.add()
    ss.scope.name = scope
    ss.spans.extend(spans)
    return req


def span(name: str = "GET /users", **fields: Any) -> Span:
    attrs = fields.pop("attributes", {})
    s = Span(
        name=name,
        trace_id=fields.pop("trace_id", TRACE_ID),
        span_id=fields.pop("span_id", SPAN_ID),
        start_time_unix_nano=fields.pop("start", T0),
        end_time_unix_nano=fields.pop("end", T0 + 12_500_000),
        **fields,
    )
    s.attributes.extend(kvs(attrs))
    return s


def logs(
    records: list[LogRecord], resource: dict[str, Any] | None = None
) -> ExportLogsServiceRequest:
    req = ExportLogsServiceRequest()
    rl = req.resource_logs.add()
    rl.resource.attributes.extend(kvs(resource or {}))
    rl.scope_logs.add().log_records.extend(records)
    return req


def metrics(
    items: list[Metric], resource: dict[str, Any] | None = None
) -> ExportMetricsServiceRequest:
    req = ExportMetricsServiceRequest()
    rm = req.resource_metrics.add()
    rm.resource.attributes.extend(kvs(resource or {}))
    rm.scope_metrics.add().metrics.extend(items)
    return req
