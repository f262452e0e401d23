"""System fields of an event: time, service, namespace, id."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from typing import Any

from limelight.times import DAY_MS

TIMESTAMP_FIELDS = ("timestamp", "_timestamp", "@timestamp", "time")
DEFAULT_NAME = "default"
# An event time outside this window is taken for a mistake and the receive time is used.
EARLIEST_MS = 946_684_800_000  # 2000-01-01
FUTURE_SLACK_MS = DAY_MS


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def _epoch_to_ms(number: float) -> float:
    """Seconds, milliseconds, microseconds or nanoseconds, told apart by size."""
    magnitude = abs(number)
    if magnitude < 1e11:
        return number * 1000
    if magnitude < 1e14:
        return number
    if magnitude < 1e17:
        return number / 1000
    return number / 1_000_000


# An epoch sent as text: ASCII digits only. str.isdigit() also takes '²' and '①',
# which float() refuses, and float() reads digits of every script.
_EPOCH_TEXT = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def _parse_time(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return _epoch_to_ms(value)
        except OverflowError:  # an integer beyond any float (kept exact when parsed)
            return None
    if isinstance(value, str) and value:
        text = value.strip()
        if _EPOCH_TEXT.fullmatch(text):
            return _epoch_to_ms(float(text))
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.timestamp() * 1000
    return None


def event_time_ms(event: dict[str, Any], received_ms: int) -> int:
    for name in TIMESTAMP_FIELDS:
        if name in event:
            ms = _parse_time(event[name])
            if ms is not None and EARLIEST_MS <= ms <= received_ms + FUTURE_SLACK_MS:
                return int(ms)
    return received_ms


# What JavaScript clients send for a value they do not have.
_ABSENT = ("", "undefined", "null")


def header_name(value: str | None) -> str | None:
    """A service or namespace as given, or None when it says "nothing" ('undefined')."""
    if value is None:
        return None
    value = value.strip()
    return None if value in _ABSENT else value


def pick_name(header: str | None, event: dict[str, Any], key: str) -> str:
    """The header's name, else the event's own field ``key``, else 'default'."""
    if header is not None:
        return header
    value = event.get(key)
    if isinstance(value, str):
        return header_name(value) or DEFAULT_NAME
    return DEFAULT_NAME
