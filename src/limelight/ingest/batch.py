"""Parsing a batch body and validating each event in it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import orjson

from limelight.errors import BadRequest
from limelight.event_json import has_big_integer

__all__ = [
    "IngestLimits",
    "ParsedBatch",
    "ValidEvent",
    "dumps",
    "has_big_integer",
    "loads",
    "parse_batch",
]


def loads(body: bytes) -> tuple[Any, bool]:
    """Parse JSON; the flag says whether the exact (stdlib) path was needed.

    orjson parses first in every case: it is the judge of valid JSON (no NaN,
    no infinity, no unpaired surrogates, UTF-8 only) so both paths accept the
    same bodies.
    """
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadRequest("the body is not valid JSON") from exc
    if not has_big_integer(body):
        return doc, False
    return json.loads(body), True


def dumps(value: Any, exact: bool) -> bytes:
    if exact:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    # orjson's result keeps its whole output buffer (about 4KB) however small
    # the JSON: a batch of tiny events would hold ~1,000x its size in memory.
    # A right-sized copy costs less than that over-allocation (measured faster).
    return memoryview(orjson.dumps(value)).tobytes()


@dataclass(frozen=True, slots=True)
class IngestLimits:
    """What one request may cost; built from the settings by the API layer."""

    max_event_bytes: int
    max_events: int
    # The stored JSON of one request may exceed the body (OTLP repeats the
    # resource in every event) but not without bound.
    max_stored_bytes: int
    max_invalid_listed: int = 1000


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

    def reject(self, entry: dict[str, Any], limits: IngestLimits) -> None:
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
    doc, exact = loads(body)
    if not isinstance(doc, list):
        raise BadRequest("the body must be a JSON array of events")
    if not doc:
        raise BadRequest("the array is empty; send at least one event")
    if len(doc) > limits.max_events:
        raise BadRequest(f"{len(doc)} events in one request; send at most {limits.max_events}")
    batch = ParsedBatch(exact=exact)
    for index, element in enumerate(doc):
        if not isinstance(element, dict):
            batch.reject(
                {"index": index, "reason": "the event is not a JSON object", "event": element},
                limits,
            )
            continue
        raw = dumps(element, exact)
        if len(raw) >= limits.max_event_bytes:
            batch.reject(
                {
                    "index": index,
                    "reason": f"the event is {len(raw)} bytes; it must be under "
                    f"{limits.max_event_bytes} bytes of JSON",
                    "event": element,
                },
                limits,
            )
            continue
        batch.valid.append(ValidEvent(index, element, raw))
    return batch
