"""Moments and durations as the API writes them, and the timeframe of a read."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import overload


def utcnow() -> datetime:
    return datetime.now(UTC)


@overload
def iso_utc(moment: datetime) -> str: ...
@overload
def iso_utc(moment: None) -> None: ...
def iso_utc(moment: datetime | None) -> str | None:
    """ISO 8601 in UTC with milliseconds, e.g. 2026-11-21T10:00:00.000Z."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


MINUTE, HOUR, DAY = 60, 3600, 86400  # seconds
MINUTE_MS, HOUR_MS, DAY_MS = MINUTE * 1000, HOUR * 1000, DAY * 1000  # events' unix milliseconds


@dataclass(frozen=True)
class Timeframe:
    """The span of events a read covers, in unix milliseconds: ``from_ms`` inclusive,
    ``to_ms`` exclusive. The query compiler, the reads over spans, the datasets list and
    the console's pages all take this one type."""

    from_ms: int
    to_ms: int


_DURATION = re.compile(r"([1-9][0-9]{0,6})([smhd])")
_UNIT_SECONDS = {"s": 1, "m": MINUTE, "h": HOUR, "d": DAY}


def parse_duration(text: str) -> int | None:
    """Seconds of ``"90s"``, ``"5m"``, ``"1h"``, ``"7d"``; None when not such a duration."""
    found = _DURATION.fullmatch(text.strip())
    return int(found.group(1)) * _UNIT_SECONDS[found.group(2)] if found else None


def format_duration(seconds: int) -> str:
    """The shortest exact form: 86400 -> "1d", 5400 -> "90m"."""
    for unit in ("d", "h", "m"):
        if seconds % _UNIT_SECONDS[unit] == 0:
            return f"{seconds // _UNIT_SECONDS[unit]}{unit}"
    return f"{seconds}s"


def duration_error(text: str | None, bounds: tuple[int, int]) -> str | None:
    """What is wrong with ``text`` as a duration within ``bounds`` (seconds); None if right."""
    if text is None:
        return None
    seconds = parse_duration(text)
    low, high = bounds
    if seconds is None:
        return 'a duration such as "30s", "5m", "1h" or "1d"'
    if not low <= seconds <= high:
        return f"from {format_duration(low)} to {format_duration(high)}"
    return None
