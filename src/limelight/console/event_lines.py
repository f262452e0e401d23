"""Events as the console's tables show them: time, service, a message-like summary, and
the columns the user picked. Pure, shared by the explorer, its live tail and traces."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlencode

from limelight.event_json import SYSTEM_FIELDS
from limelight.query.results import lookup

# A level's tone, by its lower-cased text (syslog's names, OpenTelemetry's, common
# abbreviations). Rows of these stand out on the Events page.
ERROR_LEVELS = frozenset(
    {"error", "err", "fatal", "critical", "crit", "alert", "emerg", "emergency", "panic"}
)
WARN_LEVELS = frozenset({"warn", "warning"})
# The first of these that holds text is the event's summary; else its JSON.
MESSAGE_KEYS = ("message", "msg", "name", "body", "error", "event", "log")
MAX_CELL = 200
# An OpenTelemetry trace id as the trace page takes it: 32 lowercase hex digits. Anything
# else is never put in a link (an event's traceId is the sender's text: "../../x" would
# make a trace link lead to another page of the console).
TRACE_ID = re.compile(r"[0-9a-f]{32}")


def clip(text: str, width: int = MAX_CELL) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def compact(value: Any) -> str:
    """A value as one line: text as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def summary(event: Mapping[str, Any]) -> str:
    for key in MESSAGE_KEYS:
        value = event.get(key)
        if isinstance(value, str) and value:
            return clip(value)
    rest = {k: v for k, v in event.items() if k not in SYSTEM_FIELDS}
    return clip(compact(rest))


def tone_of(level: str | None) -> str | None:
    """``error``, ``warn`` or None (nothing to stand out) for a level's text."""
    text = (level or "").strip().lower()
    if text in ERROR_LEVELS:
        return "error"
    return "warn" if text in WARN_LEVELS else None


def as_trace_id(text: str) -> str | None:
    """``text`` as a trace id (case and surrounding spaces aside), or None."""
    tid = text.strip().lower()
    return tid if TRACE_ID.fullmatch(tid) else None


def trace_id_of(event: Mapping[str, Any]) -> str | None:
    """The event's trace id (OpenTelemetry spans and logs), when it has one."""
    value = event.get("traceId")
    return as_trace_id(value) if isinstance(value, str) else None


@dataclass(frozen=True)
class EventLine:
    id: str
    dataset: str
    time: int
    service: str
    summary: str
    cells: list[str]
    link: str
    trace_id: str | None
    trace: str | None  # the trace's page, when it has one
    level: str | None = None  # the value of the dataset's level key, as text
    tone: str | None = None  # "error" or "warn" when the level says so

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def event_link(base: str, event: Mapping[str, Any], back: Sequence[tuple[str, str]] = ()) -> str:
    """An event's page; ``back`` is the address of the Events page it is opened from
    (its dataset, timeframe, search and filters), which the page's breadcrumb leads to."""
    address = urlencode([("t", event["_timestamp"]), *back])
    return f"{base}/events/{event['_dataset']}/{event['_id']}?{address}"


def event_line(
    base: str,
    event: Mapping[str, Any],
    columns: Sequence[str],
    back: Sequence[tuple[str, str]] = (),
    level_key: str | None = None,
) -> EventLine:
    """``level_key``: the dataset's level-like key, whose value the line shows and
    whose tone colours it (see ``field_actions.LEVEL_KEYS``)."""
    trace_id = trace_id_of(event)
    level: str | None = None
    if level_key is not None:
        found, value = lookup(event, level_key)
        level = clip(compact(value), 40) if found and value is not None else None
    cells = []
    for column in columns:
        found, value = lookup(event, column)
        cells.append(clip(compact(value)) if found and value is not None else "")
    return EventLine(
        id=str(event["_id"]),
        dataset=str(event["_dataset"]),
        time=int(event["_timestamp"]),
        service=str(event["_service"]),
        summary=summary(event),
        cells=cells,
        link=event_link(base, event, [(k, v) for k, v in back if v != ""]),
        trace_id=trace_id,
        trace=f"{base}/traces/{trace_id}?t={event['_timestamp']}" if trace_id else None,
        level=level,
        tone=tone_of(level),
    )


def pretty(event: Mapping[str, Any]) -> str:
    """The whole event as indented JSON, its system fields first."""
    system = {k: event[k] for k in SYSTEM_FIELDS if k in event}
    rest = {k: v for k, v in event.items() if k not in SYSTEM_FIELDS}
    return json.dumps({**system, **rest}, indent=2, ensure_ascii=False)
