"""Events as the console's tables show them: time, service, a message-like summary, and
the columns the user picked. Pure, shared by the explorer, its live tail and traces."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from limelight.event_json import SYSTEM_FIELDS
from limelight.query.results import lookup

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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def event_link(base: str, event: Mapping[str, Any]) -> str:
    return f"{base}/events/{event['_dataset']}/{event['_id']}?t={event['_timestamp']}"


def event_line(base: str, event: Mapping[str, Any], columns: Sequence[str]) -> EventLine:
    trace_id = trace_id_of(event)
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
        link=event_link(base, event),
        trace_id=trace_id,
        trace=f"{base}/traces/{trace_id}?t={event['_timestamp']}" if trace_id else None,
    )


def pretty(event: Mapping[str, Any]) -> str:
    """The whole event as indented JSON, its system fields first."""
    system = {k: event[k] for k in SYSTEM_FIELDS if k in event}
    rest = {k: v for k, v in event.items() if k not in SYSTEM_FIELDS}
    return json.dumps({**system, **rest}, indent=2, ensure_ascii=False)
