"""Log records to events: one event per record (the mapping is in the README, "OpenTelemetry")."""

from __future__ import annotations

from typing import Any

import orjson
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from limelight.ingest.otlp.common import (
    SPAN_ID_BYTES,
    TRACE_ID_BYTES,
    Group,
    Rejections,
    any_value,
    attributes,
    map_resources,
)

# OTLP severity numbers come in bands of four (TRACE..TRACE4, DEBUG..DEBUG4, ...).
LEVELS = ("trace", "debug", "info", "warn", "error", "fatal")


def level_of(record: LogRecord) -> str | None:
    """A lower-case level, the key Limelight's error views look at."""
    if record.severity_text:
        return record.severity_text.strip().lower() or None
    number = record.severity_number
    if 1 <= number <= 24:
        return LEVELS[(number - 1) // 4]
    return None


def _add_body(event: dict[str, Any], record: LogRecord) -> None:
    if not record.HasField("body"):
        return
    body = any_value(record.body)
    if isinstance(body, str):
        event["message"] = body
    elif body is not None:
        # A structured body stays queryable under "body"; "message" gets its text.
        event["message"] = orjson.dumps(body).decode()
        event["body"] = body


def log_event(record: LogRecord) -> dict[str, Any]:
    event: dict[str, Any] = {"timestamp": record.time_unix_nano or record.observed_time_unix_nano}
    _add_body(event, record)
    if record.severity_text:
        event["severityText"] = record.severity_text
    if record.severity_number:
        event["severityNumber"] = record.severity_number
    level = level_of(record)
    if level:
        event["level"] = level
    if record.event_name:
        event["eventName"] = record.event_name
    if record.trace_id:
        event["traceId"] = record.trace_id.hex()
    if record.span_id:
        event["spanId"] = record.span_id.hex()
    if len(record.attributes):
        event["attributes"] = attributes(record.attributes)
    return event


def _ids_valid(record: LogRecord) -> bool:
    return len(record.trace_id) in (0, TRACE_ID_BYTES) and len(record.span_id) in (0, SPAN_ID_BYTES)


def map_logs(request: ExportLogsServiceRequest, rejections: Rejections) -> list[Group]:
    def events_of(record: LogRecord) -> list[dict[str, Any]]:
        if not _ids_valid(record):
            rejections.add_invalid_ids("log records")
            return []
        return [log_event(record)]

    return map_resources(
        request.resource_logs, lambda r: r.scope_logs, lambda s: s.log_records, events_of
    )
