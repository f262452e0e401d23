"""Log records and metric data points become events."""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.metrics.v1.metrics_pb2 import AggregationTemporality as AT
from opentelemetry.proto.metrics.v1.metrics_pb2 import Metric

from limelight.ingest.otlp.common import Rejections
from limelight.ingest.otlp.logs import map_logs
from limelight.ingest.otlp.metrics import map_metrics
from tests.unit.ingest.otlp_builders import SPAN_ID, T0, TRACE_ID, kvs, logs, metrics, value


def log_events(*records: LogRecord, rejections: Rejections | None = None) -> list[dict[str, Any]]:
    groups = map_logs(logs(list(records), {"service.name": "api"}), rejections or Rejections())
    assert groups[0].service == "api"
    return groups[0].events


def metric_events(*items: Metric) -> list[dict[str, Any]]:
    return map_metrics(metrics(list(items)), Rejections())[0].events


def test_log_record_fields() -> None:
    record = LogRecord(
        time_unix_nano=T0,
        severity_number=17,
        severity_text="ERROR",
        body=AnyValue(string_value="payment failed"),
        trace_id=TRACE_ID,
        span_id=SPAN_ID,
        event_name="payment.failure",
    )
    record.attributes.extend(kvs({"order.id": 42}))
    [event] = log_events(record)
    assert event["message"] == "payment failed"
    assert event["severityText"] == "ERROR"
    assert event["severityNumber"] == 17
    assert event["level"] == "error"
    assert event["traceId"] == TRACE_ID.hex()
    assert event["spanId"] == SPAN_ID.hex()
    assert event["eventName"] == "payment.failure"
    assert event["attributes"] == {"order": {"id": 42}}
    assert event["timestamp"] == T0
    assert event["resource"] == {"service": {"name": "api"}}


def test_level_from_severity_number_when_no_text() -> None:
    levels = [log_events(LogRecord(severity_number=n))[0].get("level") for n in (1, 5, 9, 13, 21)]
    assert levels == ["trace", "debug", "info", "warn", "fatal"]
    assert "level" not in log_events(LogRecord())[0]


def test_structured_body_is_kept_and_given_as_text() -> None:
    [event] = log_events(LogRecord(body=value({"user": "ann", "n": 2})))
    assert event["body"] == {"user": "ann", "n": 2}
    assert event["message"] == '{"user":"ann","n":2}'


def test_observed_time_is_used_when_the_record_has_none() -> None:
    [event] = log_events(LogRecord(observed_time_unix_nano=T0 + 7))
    assert event["timestamp"] == T0 + 7


def test_log_with_a_malformed_trace_id_is_rejected() -> None:
    rejections = Rejections()
    events = log_events(LogRecord(trace_id=b"\x01\x02"), LogRecord(), rejections=rejections)
    assert len(events) == 1
    assert rejections.count == 1


def test_gauge_and_sum_points() -> None:
    gauge = Metric(name="queue.depth", unit="{items}", description="depth")
    p = gauge.gauge.data_points.add(time_unix_nano=T0, as_int=7)
    p.attributes.extend(kvs({"queue.name": "emails"}))
    total = Metric(name="http.requests", unit="1")
    total.sum.is_monotonic = True
    total.sum.aggregation_temporality = AT.AGGREGATION_TEMPORALITY_CUMULATIVE
    total.sum.data_points.add(time_unix_nano=T0, start_time_unix_nano=T0 - 10, as_double=3.5)
    total.sum.data_points.add(time_unix_nano=T0, as_double=1.0)
    events = metric_events(gauge, total)
    assert events[0] == {
        "timestamp": T0,
        "name": "queue.depth",
        "description": "depth",
        "unit": "{items}",
        "type": "gauge",
        "value": 7,
        "attributes": {"queue": {"name": "emails"}},
    }
    assert events[1]["type"] == "sum"
    assert events[1]["value"] == 3.5
    assert events[1]["monotonic"] is True
    assert events[1]["temporality"] == "CUMULATIVE"
    assert events[1]["startTimestamp"] == T0 - 10
    assert events[2]["value"] == 1.0


def test_histogram_point() -> None:
    h = Metric(name="http.server.duration", unit="ms")
    h.histogram.aggregation_temporality = AT.AGGREGATION_TEMPORALITY_DELTA
    h.histogram.data_points.add(
        time_unix_nano=T0,
        count=6,
        sum=123.0,
        min=1.0,
        max=80.0,
        explicit_bounds=[10.0, 50.0],
        bucket_counts=[3, 2, 1],
    )
    [event] = metric_events(h)
    assert event["type"] == "histogram"
    assert event["temporality"] == "DELTA"
    assert (event["count"], event["sum"], event["min"], event["max"]) == (6, 123.0, 1.0, 80.0)
    assert event["buckets"] == {"bounds": [10.0, 50.0], "counts": [3, 2, 1]}
    assert "value" not in event


def test_histogram_without_optional_sum_min_max() -> None:
    h = Metric(name="h")
    h.histogram.data_points.add(time_unix_nano=T0, count=0)
    [event] = metric_events(h)
    assert event["count"] == 0
    assert not {"sum", "min", "max"} & event.keys()


def test_exponential_histogram_and_summary_points() -> None:
    e = Metric(name="latency")
    p = e.exponential_histogram.data_points.add(time_unix_nano=T0, count=5, sum=9.0, scale=2)
    p.zero_count = 1
    p.positive.offset = 3
    p.positive.bucket_counts.extend([1, 3])
    s = Metric(name="rpc.duration")
    q = s.summary.data_points.add(time_unix_nano=T0, count=10, sum=55.0)
    q.quantile_values.add(quantile=0.5, value=5.0)
    q.quantile_values.add(quantile=0.99, value=9.9)
    exp_event, summary_event = metric_events(e, s)
    assert exp_event["type"] == "exponential_histogram"
    assert exp_event["scale"] == 2 and exp_event["zeroCount"] == 1
    assert exp_event["positive"] == {"offset": 3, "counts": [1, 3]}
    assert "negative" not in exp_event
    assert summary_event["type"] == "summary"
    assert summary_event["quantiles"] == [
        {"quantile": 0.5, "value": 5.0},
        {"quantile": 0.99, "value": 9.9},
    ]


def test_a_metric_without_data_gives_no_event() -> None:
    assert metric_events(Metric(name="empty")) == []
