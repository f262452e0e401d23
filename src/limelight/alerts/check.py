"""One check's verdict, and what it should tell people: pure functions of the run's data.

A grouped query is checked per group: each group whose value crosses the
threshold is in alarm, and the alert is in ALARM while at least one is. A value
that is null (an average of no events) crosses nothing; when no group has a
value the verdict is NO_DATA, which never notifies. A COUNT (or a
COUNT_DISTINCT, a SUM) of no events is 0, a value like any other: a grouped
count that finds no events at all is judged as 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from limelight.alerts.spec import threshold_crossed


class AlertState(StrEnum):
    OK = "OK"
    ALARM = "ALARM"
    NO_DATA = "NO_DATA"
    ERROR = "ERROR"


class Notification(StrEnum):
    FIRING = "firing"
    RESOLVED = "resolved"
    TEST = "test"


@dataclass(frozen=True)
class Verdict:
    state: AlertState
    values: list[dict[str, Any]]  # {"groups", "value", "alarm"} per group evaluated


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


# Calculations whose value over no events is 0 rather than null: for them, a grouped
# query that found no events says every group is at 0.
ZERO_WHEN_EMPTY = frozenset({"COUNT", "COUNT_DISTINCT", "SUM"})


def judge(
    data: dict[str, Any],
    calculation: str,
    operation: str,
    threshold: float,
    zero_when_empty: bool = False,
) -> Verdict:
    """The verdict on a completed run's ``data`` (its ``aggregates``).

    ``zero_when_empty``: the calculation counts or sums, so a run without groups
    (no events at all) is judged as the value 0 rather than as no data.
    """
    if not data.get("aggregates") and zero_when_empty:
        alarm = threshold_crossed(operation, 0.0, threshold)
        state = AlertState.ALARM if alarm else AlertState.OK
        return Verdict(state, [{"groups": {}, "value": 0, "alarm": alarm}])
    values = []
    for aggregate in data.get("aggregates") or []:
        raw = (aggregate.get("values") or {}).get(calculation)
        value = _number(raw)
        alarm = value is not None and threshold_crossed(operation, value, threshold)
        values.append({"groups": aggregate.get("groups") or {}, "value": raw, "alarm": alarm})
    if not any(_number(v["value"]) is not None for v in values):
        return Verdict(AlertState.NO_DATA, values)
    state = AlertState.ALARM if any(v["alarm"] for v in values) else AlertState.OK
    return Verdict(state, values)


def notification_due(
    state: AlertState,
    last_notification: str | None,
    last_notified_at: datetime | None,
    renotify: timedelta | None,
    now: datetime,
) -> Notification | None:
    """What to send after a check that ended in ``state``.

    Firing when the alert enters ALARM (and again every ``renotify`` while it
    stays there); resolved when it is OK again after a firing notification, even
    if NO_DATA or ERROR came between; nothing otherwise.
    """
    firing = last_notification == Notification.FIRING
    if state is AlertState.ALARM:
        if not firing:
            return Notification.FIRING
        if renotify is not None and last_notified_at is not None:
            return Notification.FIRING if now - last_notified_at >= renotify else None
        return None
    if state is AlertState.OK and firing:
        return Notification.RESOLVED
    return None
