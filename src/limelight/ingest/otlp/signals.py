"""The three OTLP signals: their request and response messages and their mappers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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

from limelight.ingest.otlp.common import Group, Rejections
from limelight.ingest.otlp.logs import map_logs
from limelight.ingest.otlp.metrics import map_metrics
from limelight.ingest.otlp.spans import map_spans


@dataclass(frozen=True, slots=True)
class Signal:
    name: str  # the path segment: /v1/<name>
    request: type[Any]
    response: type[Any]
    rejected_field: str  # the count in the response's partial_success
    items: str  # what one item is called in messages
    mapper: Callable[[Any, Rejections], list[Group]]


TRACES = Signal(
    "traces",
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
    "rejected_spans",
    "spans",
    map_spans,
)
LOGS = Signal(
    "logs",
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
    "rejected_log_records",
    "log records",
    map_logs,
)
METRICS = Signal(
    "metrics",
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
    "rejected_data_points",
    "data points",
    map_metrics,
)
SIGNALS = {s.name: s for s in (TRACES, LOGS, METRICS)}


def signal_for_path(path: str) -> Signal | None:
    """``/v1/traces``, ``/v1/logs``, ``/v1/metrics``; ``/v1`` alone means traces.

    A doubled ``/v1/v1/...`` is accepted too: it is what SDKs post to when the
    configured endpoint already ends in ``/v1/``.
    """
    parts = [p for p in path.split("/") if p]
    if parts[:2] == ["v1", "v1"]:
        parts = parts[1:]
    if parts == ["v1"]:
        return TRACES
    if len(parts) == 2 and parts[0] == "v1":
        return SIGNALS.get(parts[1])
    return None
