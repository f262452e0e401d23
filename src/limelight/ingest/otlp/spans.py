"""Spans to events: one event per span (the mapping is in the README, "OpenTelemetry")."""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from limelight.ingest.otlp.common import (
    SPAN_ID_BYTES,
    TRACE_ID_BYTES,
    Group,
    Rejections,
    attributes,
    map_resources,
    ns_to_ms,
    valid_id,
)

# Enum names without their prefix ("SPAN_KIND_SERVER" -> "SERVER"); unknown
# numbers (OTLP enums are open) are kept as their number's text.
KINDS = {v.number: v.name.removeprefix("SPAN_KIND_") for v in Span.SpanKind.DESCRIPTOR.values}
STATUS_CODES = {
    v.number: v.name.removeprefix("STATUS_CODE_") for v in Status.StatusCode.DESCRIPTOR.values
}


def _error_text(span: Span) -> str:
    """Why the span failed: its status message, else its recorded exception."""
    if span.status.message:
        return span.status.message
    for event in span.events:
        if event.name == "exception":
            for kv in event.attributes:
                if kv.key == "exception.message" and kv.value.string_value:
                    text: str = kv.value.string_value
                    return text
    return "ERROR"


def _span_events(span: Span) -> list[dict[str, Any]]:
    out = []
    for e in span.events:
        item: dict[str, Any] = {"name": e.name, "timestamp": e.time_unix_nano}
        if len(e.attributes):
            item["attributes"] = attributes(e.attributes)
        out.append(item)
    return out


def _links(span: Span) -> list[dict[str, Any]]:
    out = []
    for link in span.links:
        item: dict[str, Any] = {"traceId": link.trace_id.hex(), "spanId": link.span_id.hex()}
        if link.trace_state:
            item["traceState"] = link.trace_state
        if len(link.attributes):
            item["attributes"] = attributes(link.attributes)
        out.append(item)
    return out


def span_event(span: Span) -> dict[str, Any]:
    event: dict[str, Any] = {
        "timestamp": span.start_time_unix_nano,
        "name": span.name,
        "traceId": span.trace_id.hex(),
        "spanId": span.span_id.hex(),
    }
    if span.parent_span_id:
        event["parentSpanId"] = span.parent_span_id.hex()
    event["kind"] = KINDS.get(span.kind, str(span.kind))
    if span.start_time_unix_nano and span.end_time_unix_nano:
        event["duration"] = ns_to_ms(max(0, span.end_time_unix_nano - span.start_time_unix_nano))
    code = STATUS_CODES.get(span.status.code, str(span.status.code))
    event["status"] = {"code": code}
    if span.status.message:
        event["status"]["message"] = span.status.message
    if span.status.code == Status.STATUS_CODE_ERROR:
        event["error"] = _error_text(span)
    if span.trace_state:
        event["traceState"] = span.trace_state
    if len(span.attributes):
        event["attributes"] = attributes(span.attributes)
    if len(span.events):
        event["events"] = _span_events(span)
    if len(span.links):
        event["links"] = _links(span)
    return event


def _ids_valid(span: Span) -> bool:
    return (
        valid_id(span.trace_id, TRACE_ID_BYTES)
        and valid_id(span.span_id, SPAN_ID_BYTES)
        and (not span.parent_span_id or len(span.parent_span_id) == SPAN_ID_BYTES)
    )


def map_spans(request: ExportTraceServiceRequest, rejections: Rejections) -> list[Group]:
    def events_of(span: Span) -> list[dict[str, Any]]:
        if not _ids_valid(span):
            rejections.add_invalid_ids("spans", "an id of all zeros is none")
            return []
        return [span_event(span)]

    return map_resources(
        request.resource_spans, lambda r: r.scope_spans, lambda s: s.spans, events_of
    )
