"""What the developer's commands print: moments typed as people type them, events as one
line each coloured by level, a time series as a line of block characters. Whatever an
event holds is printed with its control characters shown, never sent to the terminal
(an event can carry escape sequences)."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import orjson
from rich.markup import escape

from limelight.cli.failures import BadUsage
from limelight.cli.output import printable

_RELATIVE = re.compile(r"([1-9][0-9]{0,6})(s|m|h|d|w)")
_UNIT_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
LEVEL_KEYS = ("level", "severity", "severityText", "log.level", "levelname")
LEVEL_STYLES = {
    "fatal": "bold red", "critical": "bold red", "error": "red", "err": "red",
    "warn": "yellow", "warning": "yellow", "debug": "dim", "trace": "dim",
}  # fmt: skip
SHOWN_FIRST = ("_timestamp", "_service", "_dataset", "message", "msg")
BLOCKS = "▁▂▃▄▅▆▇█"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def moment_ms(text: str, option: str, now: int) -> int:
    """``now``, ``1h`` (an hour ago), an ISO 8601 time, or unix milliseconds."""
    text = text.strip()
    if text == "now":
        return now
    if m := _RELATIVE.fullmatch(text):
        return now - int(m.group(1)) * _UNIT_MS[m.group(2)]
    if text.isascii() and text.isdigit() and len(text) <= 19:  # str.isdigit takes '²'
        return int(text)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise BadUsage(
            f"{option}: {text!r} is not a time: now, 15m, 1h, 7d, unix ms or ISO 8601"
        ) from None
    return int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp() * 1000)


def shown(value: Any) -> str:
    return printable(value if isinstance(value, str) else orjson.dumps(value).decode())


def level_of(event: dict[str, Any]) -> str:
    for key in LEVEL_KEYS:
        value = event.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def iso_ms(ms: Any) -> str:
    if not isinstance(ms, int | float):
        return ""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def event_line(event: dict[str, Any]) -> str:
    """One line of Rich markup: time, level, service, message, then the other fields."""
    level = level_of(event)
    style = LEVEL_STYLES.get(level.lower(), "")
    rest = {
        k: v
        for k, v in event.items()
        if k not in SHOWN_FIRST and k not in LEVEL_KEYS and k not in ("_id", "_namespace")
    }
    message = event.get("message", event.get("msg", ""))
    parts = [
        f"[dim]{iso_ms(event.get('_timestamp'))}[/]",
        f"[{style}]{escape(shown(level.upper()) or '-'):5}[/]" if style else
        f"{escape(shown(level.upper()) or '-'):5}",
        f"[cyan]{escape(shown(event.get('_service', '')))}[/]",
        escape(shown(message)),
    ]  # fmt: skip
    if rest:
        parts.append(f"[dim]{escape(shown(rest))}[/]")
    return "  ".join(p for p in parts if p)


def sparkline(values: Sequence[float | None], width: int) -> str:
    """The values as block characters, at most ``width`` (neighbours merged by their max);
    a missing value is a space."""
    points = list(values)
    if len(points) > width > 0:
        step = len(points) / width
        merged: list[float | None] = []
        for i in range(width):
            chunk = [v for v in points[int(i * step) : int((i + 1) * step)] if v is not None]
            merged.append(max(chunk) if chunk else None)
        points = merged
    present = [v for v in points if v is not None]
    if not present:
        return ""
    # From zero (or the lowest value, when below it): the heights compare as the values do.
    low, high = min(0.0, *present), max(present)
    if high == low:
        return "".join(" " if v is None else BLOCKS[len(BLOCKS) // 2] for v in points)
    top = len(BLOCKS) - 1
    return "".join(
        " " if v is None else BLOCKS[round((v - low) / (high - low) * top)] for v in points
    )
