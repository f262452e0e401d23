"""Parsing a batch body and validating each event in it."""

from __future__ import annotations

import contextlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

from limelight.errors import BadRequest
from limelight.event_json import dumps_exact, loads_exact
from limelight.ingest.nesting import (
    MAX_EVENT_DEPTH,
    array_elements,
    may_nest_deeper_than,
    nests_deeper_than,
)
from limelight.ingest.past_days import PastDays

__all__ = [
    "IngestLimits",
    "ParsedBatch",
    "ValidEvent",
    "loads",
    "parse_batch",
]


def loads(body: bytes) -> tuple[Any, bool]:
    """Parse a body; the flag says whether the exact (stdlib) path was needed."""
    try:
        return loads_exact(body)
    except orjson.JSONDecodeError as exc:
        raise BadRequest("the body is not valid JSON") from exc
    except RecursionError:  # nested deeper than the standard library reads (orjson: 1,024)
        raise BadRequest("the body nests deeper than the parser reads") from None


@dataclass(frozen=True, slots=True)
class IngestLimits:
    """What one request may cost; built from the settings by the API layer."""

    max_event_bytes: int
    max_events: int
    # The stored JSON of one request may exceed the body (OTLP repeats the
    # resource in every event) but not without bound.
    max_stored_bytes: int
    max_invalid_listed: int = 1000
    # The environment's budget of past days (``past_days``); None counts none.
    past_days: PastDays | None = None


@dataclass(slots=True)
class ValidEvent:
    index: int
    event: dict[str, Any]
    raw: bytes


@dataclass(slots=True)
class ParsedBatch:
    valid: list[ValidEvent] = field(default_factory=list)
    invalid: list[dict[str, Any]] = field(default_factory=list)
    invalid_count: int = 0  # all invalid elements; ``invalid`` lists the first few
    exact: bool = False
    # Refused elements by kind (not_an_object, too_deep, too_large), for the metrics.
    refused: Counter[str] = field(default_factory=Counter)

    def reject(self, entry: dict[str, Any], limits: IngestLimits, kind: str) -> None:
        self.refused[kind] += 1
        self.invalid_count += 1
        if len(self.invalid) < limits.max_invalid_listed:
            self.invalid.append(entry)


def parse_batch(body: bytes, limits: IngestLimits) -> ParsedBatch:
    """Split a body into valid events and rejected elements (with index and reason).

    Raises ``BadRequest`` when the body as a whole is unusable: empty, not
    JSON, not an array, or an empty array.
    """
    if not body.strip():
        raise BadRequest("the body is empty; send a JSON array of events")
    elements, exact = _elements(body)
    if not elements:
        raise BadRequest("the array is empty; send at least one event")
    if len(elements) > limits.max_events:
        raise BadRequest(f"{len(elements)} events in one request; send at most {limits.max_events}")
    batch = ParsedBatch(exact=exact)
    for index, element in enumerate(elements):
        if element is _TOO_DEEP:
            batch.reject({"index": index, "reason": _TOO_DEEP_REASON}, limits, "too_deep")
            continue
        if not isinstance(element, dict):
            entry = _listed(index, "the event is not a JSON object", element, exact)
            batch.reject(entry, limits, "not_an_object")
            continue
        try:
            raw = dumps_exact(element, exact)
        except (TypeError, RecursionError):  # orjson's JSONEncodeError is a TypeError
            raw = None  # deeper than the serialiser writes
        if raw is None or (
            may_nest_deeper_than(raw, MAX_EVENT_DEPTH)
            and nests_deeper_than(element, MAX_EVENT_DEPTH)
        ):
            batch.reject({"index": index, "reason": _TOO_DEEP_REASON}, limits, "too_deep")
            continue
        if len(raw) >= limits.max_event_bytes:
            reason = (
                f"the event is {len(raw)} bytes; it must be under "
                f"{limits.max_event_bytes} bytes of JSON"
            )
            entry = {"index": index, "reason": reason, "event": orjson.Fragment(raw)}
            batch.reject(entry, limits, "too_large")
            continue
        batch.valid.append(ValidEvent(index, element, raw))
    return batch


# Stands for an element nested deeper than the parser reads (see ``nesting``).
_TOO_DEEP = object()
_TOO_DEEP_REASON = f"the event nests objects and arrays more than {MAX_EVENT_DEPTH} levels deep"


def _elements(body: bytes) -> tuple[list[Any], bool]:
    """The body's array elements, and whether the exact (stdlib) path was needed.

    A body the parser refuses whole is split into its elements, each parsed on
    its own: one nested deeper than the parser reads (orjson stops at 1,024
    levels, the standard library at its recursion limit) is ``_TOO_DEEP`` and
    the others are kept. Any other element that is not JSON makes the body not JSON.
    """
    try:
        doc, exact = loads(body)
    except BadRequest:
        found = array_elements(body)
        if found is None:
            raise
        out: list[Any] = []
        exact = False
        for element in found:
            if element.depth > MAX_EVENT_DEPTH:
                out.append(_TOO_DEEP)
                continue
            value, element_exact = loads(element.text)
            out.append(value)
            exact = exact or element_exact
        return out, exact
    if not isinstance(doc, list):
        raise BadRequest("the body must be a JSON array of events")
    return doc, exact


def _listed(index: int, reason: str, element: Any, exact: bool) -> dict[str, Any]:
    """A rejected element with itself as JSON text, or without it when it cannot be written.

    As text, so the response holds what was parsed (integers beyond 64 bits
    included) and its own nesting never counts against the serialiser's.
    """
    entry: dict[str, Any] = {"index": index, "reason": reason}
    # Left out when nested deeper than the serialiser writes (orjson's error is a TypeError).
    with contextlib.suppress(TypeError, RecursionError):
        entry["event"] = orjson.Fragment(dumps_exact(element, exact))
    return entry
