"""A trace's spans as a waterfall: nested by parent span, placed on the trace's time line.

Pure. Spans are the events of OpenTelemetry traces (see ``ingest/otlp/spans.py``):
``traceId``, ``spanId``, ``parentSpanId`` (absent on a root), ``timestamp`` (the
start, unix nanoseconds), ``duration`` (milliseconds), ``name``, ``kind``,
``status``, ``attributes``, ``events`` (an exception recorded on the span is one
named ``exception``). A span whose parent is not among them is shown as a root
and marked. The trace's other events (its logs, from any dataset) are kept
beside the span whose ``spanId`` they carry.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from limelight.console.event_lines import compact
from limelight.query.results import lookup
from limelight.times import DAY_MS

SPAN_ID_LENGTH = 16
NS_PER_MS = 1_000_000
# A `timestamp` outside these is not a span's start in nanoseconds (below: another
# unit; above: past the year 9999, which no page can show): _timestamp (ms) is used.
NANOSECONDS_FROM = 10**17
NANOSECONDS_TO = 253_402_300_799_999 * 1_000_000
# A longer `duration` (ms; a hundred years) is the sender's mistake, not a span's.
MAX_DURATION_MS = 100 * 365.25 * DAY_MS
STATUS_CODES = frozenset({"OK", "ERROR", "UNSET"})
MIN_BAR_PERCENT = 0.3
# Services get the colours of the charts' palette (console.css .svc-0 to .svc-11), in turn.
SERVICE_COLOURS = 12
MAX_STACK_LINES = 200


def is_span(event: Mapping[str, Any]) -> bool:
    """A span has a span id and a kind, as the trace search counts them: an OpenTelemetry
    log record carries the span id of the span it was written in, never a kind."""
    span_id, kind = event.get("spanId"), event.get("kind")
    return (
        isinstance(span_id, str)
        and len(span_id) == SPAN_ID_LENGTH
        and isinstance(kind, str)
        and kind != ""
    )


@dataclass(frozen=True)
class SpanException:
    """An exception recorded on a span (OpenTelemetry's ``exception`` span event)."""

    type: str
    message: str
    stacktrace: str


def _text(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else compact(value)


def exceptions_of(event: Mapping[str, Any]) -> list[SpanException]:
    """The span's ``exception`` events; their attributes nested (``{"exception":
    {"type": ..}}``, as OTLP ingest stores them) or dotted alike."""
    out = []
    recorded = event.get("events")
    for item in recorded if isinstance(recorded, list) else []:
        if not isinstance(item, Mapping) or item.get("name") != "exception":
            continue
        attrs = item.get("attributes")
        attrs = attrs if isinstance(attrs, Mapping) else {}
        kind, message, stack = (
            _text(lookup(attrs, f"exception.{part}")[1])
            for part in ("type", "message", "stacktrace")
        )
        lines = stack.splitlines()
        if len(lines) > MAX_STACK_LINES:
            stack = "\n".join(
                [*lines[:MAX_STACK_LINES], f"… {len(lines) - MAX_STACK_LINES} more lines"]
            )
        out.append(SpanException(kind, message, stack))
    return out


def _start_ns(event: Mapping[str, Any]) -> int:
    stamp = event.get("timestamp")
    if (
        isinstance(stamp, int)
        and not isinstance(stamp, bool)
        and (NANOSECONDS_FROM <= stamp <= NANOSECONDS_TO)
    ):
        return stamp
    return int(event["_timestamp"]) * NS_PER_MS


def _duration_ms(event: Mapping[str, Any]) -> float | None:
    value = event.get("duration")
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and (
            0 <= value <= MAX_DURATION_MS  # also leaves out NaN and infinity
        )
    ):
        return float(value)
    return None


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """Nested attributes as dotted keys and one-line values."""
    if isinstance(value, Mapping) and value:
        for key, inner in value.items():
            yield from flatten(inner, f"{prefix}.{key}" if prefix else str(key))
    elif prefix:
        yield prefix, compact(value)


@dataclass
class SpanRow:
    span_id: str
    parent_id: str | None
    name: str
    service: str
    kind: str
    status: str
    error: str | None
    start_ns: int
    duration_ms: float | None
    event: Mapping[str, Any]
    depth: int = 0
    offset_percent: float = 0.0
    width_percent: float = 0.0
    orphan: bool = False  # its parent span is not among the trace's events
    colour: int = 0  # its service's place in the legend
    children: list[SpanRow] = field(default_factory=list)
    logs: list[Mapping[str, Any]] = field(default_factory=list)  # events with its span id

    @property
    def status_class(self) -> str:
        """The status as the page's style knows it: one of three, whatever was sent (the
        sent text is shown, never made a class name)."""
        code = self.status.upper()
        return code.lower() if code in STATUS_CODES else "unset"

    @property
    def attributes(self) -> list[tuple[str, str]]:
        return list(flatten(self.event.get("attributes")))

    @property
    def exceptions(self) -> list[SpanException]:
        return exceptions_of(self.event)

    @property
    def end_ns(self) -> int:
        return self.start_ns + int((self.duration_ms or 0) * NS_PER_MS)


@dataclass
class Waterfall:
    rows: list[SpanRow]
    start_ns: int
    total_ms: float
    services: list[str]  # sorted; a service's colour is its place here
    logs: list[Mapping[str, Any]] = field(default_factory=list)  # the trace's other events

    def span_ids(self) -> dict[str, SpanRow]:
        return {r.span_id: r for r in self.rows}

    @property
    def log_datasets(self) -> list[str]:
        return sorted({str(e["_dataset"]) for e in self.logs if "_dataset" in e})


def _log_order(event: Mapping[str, Any]) -> tuple[int, str]:
    stamp = event.get("_timestamp")
    return (stamp if isinstance(stamp, int) else 0, str(event.get("_id", "")))


def _row(event: Mapping[str, Any]) -> SpanRow:
    status = event.get("status")
    code = status.get("code") if isinstance(status, Mapping) else None
    parent = event.get("parentSpanId")
    return SpanRow(
        span_id=str(event["spanId"]),
        parent_id=parent if isinstance(parent, str) and parent else None,
        name=str(event.get("name") or "(unnamed span)"),
        service=str(event.get("_service", "")),
        kind=str(event.get("kind") or ""),
        status=str(code or "UNSET"),
        error=str(event["error"]) if "error" in event else None,
        start_ns=_start_ns(event),
        duration_ms=_duration_ms(event),
        event=event,
    )


def waterfall(events: Sequence[Mapping[str, Any]]) -> Waterfall | None:
    """The spans among ``events`` in display order (each after its parent, siblings by
    start), placed on the trace's time line; None when there is no span."""
    spans: dict[str, SpanRow] = {}
    for event in events:
        if is_span(event):
            row = _row(event)
            spans.setdefault(row.span_id, row)
    if not spans:
        return None
    roots: list[SpanRow] = []
    for row in spans.values():
        parent = spans.get(row.parent_id) if row.parent_id else None
        if parent is None or parent is row:
            row.orphan = row.parent_id is not None
            roots.append(row)
        else:
            parent.children.append(row)
    start = min(r.start_ns for r in spans.values())
    end = max(r.end_ns for r in spans.values())
    total_ns = max(end - start, 1)
    ordered: list[SpanRow] = []
    placed: set[str] = set()

    def place(root: SpanRow) -> None:
        # Depth first without recursion: a trace may nest deeper than Python's stack.
        stack = [(root, 0)]
        while stack:
            row, depth = stack.pop()
            if row.span_id in placed:
                continue
            placed.add(row.span_id)
            row.depth = depth
            row.offset_percent = round(100 * (row.start_ns - start) / total_ns, 3)
            width = 100 * ((row.duration_ms or 0) * NS_PER_MS) / total_ns
            row.width_percent = round(min(max(width, MIN_BAR_PERCENT), 100 - row.offset_percent), 3)
            ordered.append(row)
            children = sorted(row.children, key=lambda c: (c.start_ns, c.span_id), reverse=True)
            stack.extend((child, depth + 1) for child in children)

    by_start = sorted(spans.values(), key=lambda r: (r.start_ns, r.span_id))
    for root in sorted(roots, key=lambda r: (r.start_ns, r.span_id)):
        place(root)
    for row in by_start:  # spans in a cycle of parents: none of them is a root
        if row.span_id not in placed:
            row.orphan = True
            place(row)
    services = sorted({r.service for r in ordered})
    place_of = {name: i for i, name in enumerate(services)}
    for row in ordered:
        row.colour = place_of[row.service] % SERVICE_COLOURS
    logs = sorted((e for e in events if not is_span(e)), key=_log_order)
    for event in logs:
        span_id = event.get("spanId")
        owner = spans.get(span_id) if isinstance(span_id, str) else None
        if owner is not None:
            owner.logs.append(event)
    return Waterfall(ordered, start, total_ns / NS_PER_MS, services, logs)
