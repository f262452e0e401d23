"""Metric data points to events: one event per data point (mapping: README, "OpenTelemetry")."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.metrics.v1.metrics_pb2 import (
    AggregationTemporality,
    ExponentialHistogramDataPoint,
    HistogramDataPoint,
    Metric,
    NumberDataPoint,
    SummaryDataPoint,
)

from limelight.ingest.otlp.common import (
    Group,
    Rejections,
    attributes,
    map_resources,
)

TEMPORALITIES = {
    v.number: v.name.removeprefix("AGGREGATION_TEMPORALITY_")
    for v in AggregationTemporality.DESCRIPTOR.values
}
Reader = Callable[[Any, dict[str, Any]], None]
Point = NumberDataPoint | HistogramDataPoint | ExponentialHistogramDataPoint | SummaryDataPoint


def _number(point: NumberDataPoint, out: dict[str, Any]) -> None:
    kind = point.WhichOneof("value")
    if kind == "as_double":
        out["value"] = point.as_double
    elif kind == "as_int":
        out["value"] = point.as_int


def _stats(point: HistogramDataPoint | ExponentialHistogramDataPoint, out: dict[str, Any]) -> None:
    out["count"] = point.count
    for name in ("sum", "min", "max"):
        if point.HasField(name):
            out[name] = getattr(point, name)


def _histogram(point: HistogramDataPoint, out: dict[str, Any]) -> None:
    _stats(point, out)
    # counts has one more entry than bounds: the last bucket is (bounds[-1], +Inf).
    out["buckets"] = {"bounds": list(point.explicit_bounds), "counts": list(point.bucket_counts)}


def _exponential(point: ExponentialHistogramDataPoint, out: dict[str, Any]) -> None:
    _stats(point, out)
    out["scale"] = point.scale
    out["zeroCount"] = point.zero_count
    if point.zero_threshold:
        out["zeroThreshold"] = point.zero_threshold
    for side in ("positive", "negative"):
        buckets = getattr(point, side)
        if len(buckets.bucket_counts):
            out[side] = {"offset": buckets.offset, "counts": list(buckets.bucket_counts)}


def _summary(point: SummaryDataPoint, out: dict[str, Any]) -> None:
    out["count"] = point.count
    out["sum"] = point.sum
    out["quantiles"] = [{"quantile": q.quantile, "value": q.value} for q in point.quantile_values]


def _points(metric: Metric) -> tuple[str, Iterable[Any], Reader]:
    """The metric's type, its data points and the function that reads one."""
    kind = metric.WhichOneof("data")
    if kind == "gauge":
        return kind, metric.gauge.data_points, _number
    if kind == "sum":
        return kind, metric.sum.data_points, _number
    if kind == "histogram":
        return kind, metric.histogram.data_points, _histogram
    if kind == "exponential_histogram":
        return kind, metric.exponential_histogram.data_points, _exponential
    if kind == "summary":
        return kind, metric.summary.data_points, _summary
    return "none", (), _number


def _metric_fields(metric: Metric, kind: str) -> dict[str, Any]:
    fields: dict[str, Any] = {"name": metric.name}
    if metric.description:
        fields["description"] = metric.description
    if metric.unit:
        fields["unit"] = metric.unit
    fields["type"] = kind
    if kind == "sum":
        fields["monotonic"] = metric.sum.is_monotonic
    if kind in ("sum", "histogram", "exponential_histogram"):
        temporality = getattr(metric, kind).aggregation_temporality
        fields["temporality"] = TEMPORALITIES.get(temporality, str(temporality))
    return fields


def point_event(fields: dict[str, Any], point: Point, read: Reader) -> dict[str, Any]:
    event: dict[str, Any] = {"timestamp": point.time_unix_nano, **fields}
    if point.start_time_unix_nano:
        event["startTimestamp"] = point.start_time_unix_nano
    read(point, event)
    if len(point.attributes):
        event["attributes"] = attributes(point.attributes)
    return event


def map_metrics(request: ExportMetricsServiceRequest, rejections: Rejections) -> list[Group]:
    def events_of(metric: Metric) -> list[dict[str, Any]]:
        kind, points, read = _points(metric)
        fields = _metric_fields(metric, kind)
        return [point_event(fields, point, read) for point in points]

    return map_resources(
        request.resource_metrics, lambda r: r.scope_metrics, lambda s: s.metrics, events_of
    )
