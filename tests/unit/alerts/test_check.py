"""An alert check's verdict, what it notifies, its schedule, and durations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from limelight.alerts.check import AlertState, Notification, judge, notification_due
from limelight.alerts.evaluator import next_due
from limelight.times import format_duration, parse_duration

T0 = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def _data(*rows: tuple[dict[str, object], object]) -> dict[str, object]:
    return {"aggregates": [{"groups": g, "values": {"P99(duration)": v}} for g, v in rows]}


def test_each_group_is_judged_and_one_in_alarm_puts_the_alert_in_alarm() -> None:
    verdict = judge(
        _data(({"service": "api"}, 812.5), ({"service": "web"}, 120), ({"service": "db"}, None)),
        "P99(duration)",
        ">",
        500,
    )
    assert verdict.state is AlertState.ALARM
    assert verdict.values == [
        {"groups": {"service": "api"}, "value": 812.5, "alarm": True},
        {"groups": {"service": "web"}, "value": 120, "alarm": False},
        {"groups": {"service": "db"}, "value": None, "alarm": False},
    ]


@pytest.mark.parametrize(
    ("operation", "value", "alarm"),
    [(">", 500, False), (">=", 500, True), ("<", 500, False), ("<=", 500, True),
     ("=", 500, True), ("!=", 500, False), ("!=", 499.5, True)],
)  # fmt: skip
def test_every_operation_compares_as_written(operation: str, value: float, alarm: bool) -> None:
    verdict = judge(_data(({}, 500)), "P99(duration)", operation, value)
    assert verdict.state is (AlertState.ALARM if alarm else AlertState.OK)


def test_null_values_alone_are_no_data() -> None:
    assert judge(_data(({}, None)), "P99(duration)", ">", 1).state is AlertState.NO_DATA
    assert judge({"aggregates": []}, "P99(duration)", ">", 1).state is AlertState.NO_DATA


def test_a_count_of_no_events_is_zero_even_when_grouped() -> None:
    low = judge({"aggregates": []}, "COUNT", "<", 1, zero_when_empty=True)
    assert (low.state, low.values) == (
        AlertState.ALARM,
        [{"groups": {}, "value": 0, "alarm": True}],
    )
    assert judge({"aggregates": []}, "COUNT", ">", 10, zero_when_empty=True).state is AlertState.OK


def test_firing_once_then_again_only_after_renotify_then_resolved() -> None:
    every_hour = timedelta(hours=1)
    assert notification_due(AlertState.ALARM, None, None, None, T0) is Notification.FIRING
    assert notification_due(AlertState.ALARM, "firing", T0, None, T0 + every_hour) is None
    later = T0 + timedelta(minutes=59)
    assert notification_due(AlertState.ALARM, "firing", T0, every_hour, later) is None
    again = T0 + every_hour
    assert (
        notification_due(AlertState.ALARM, "firing", T0, every_hour, again) is Notification.FIRING
    )
    assert notification_due(AlertState.OK, "firing", T0, None, again) is Notification.RESOLVED
    assert notification_due(AlertState.OK, "resolved", T0, None, again) is None
    assert notification_due(AlertState.OK, None, None, None, again) is None


def test_no_data_and_errors_never_notify_but_a_later_ok_resolves() -> None:
    for state in (AlertState.NO_DATA, AlertState.ERROR):
        assert (
            notification_due(state, "firing", T0, timedelta(minutes=1), T0 + timedelta(hours=1))
            is None
        )
    assert notification_due(AlertState.OK, "firing", T0, None, T0) is Notification.RESOLVED


def test_after_downtime_the_schedule_skips_what_was_missed() -> None:
    minute = 60
    assert next_due(T0, minute, T0 + timedelta(seconds=3)) == T0 + timedelta(minutes=1)
    # Down for an hour and a half: one check now, the next on the old grid after now.
    assert next_due(T0, minute, T0 + timedelta(minutes=90, seconds=20)) == T0 + timedelta(
        minutes=91
    )
    assert next_due(T0, minute, T0 - timedelta(seconds=1)) == T0 + timedelta(minutes=1)


def test_durations() -> None:
    assert [parse_duration(t) for t in ("30s", "5m", "1h", "7d", "90m")] == [
        30, 300, 3600, 604800, 5400,
    ]  # fmt: skip
    assert [parse_duration(t) for t in ("", "5", "m", "1.5h", "-1m", "0m", "1w")] == [None] * 7
    assert [format_duration(s) for s in (60, 5400, 86400, 90)] == ["1m", "90m", "1d", "90s"]
