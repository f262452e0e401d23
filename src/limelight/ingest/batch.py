"""Parsing a batch body and validating each event in it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import orjson

from limelight.errors import BadRequest
from limelight.event_json import has_big_integer

__all__ = ["ParsedBatch", "ValidEvent", "dumps", "has_big_integer", "loads", "parse_batch"]


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
    return orjson.dumps(value)


@dataclass(slots=True)
class ValidEvent:
    index: int
    event: dict[str, Any]
    raw: bytes


@dataclass(slots=True)
class ParsedBatch:
    valid: list[ValidEvent] = field(default_factory=list)
    invalid: list[dict[str, Any]] = field(default_factory=list)
    exact: bool = False


def parse_batch(body: bytes, max_event_bytes: int) -> ParsedBatch:
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
    batch = ParsedBatch(exact=exact)
    for index, element in enumerate(doc):
        if not isinstance(element, dict):
            batch.invalid.append(
                {"index": index, "reason": "the event is not a JSON object", "event": element}
            )
            continue
        raw = dumps(element, exact)
        if len(raw) >= max_event_bytes:
            batch.invalid.append(
                {
                    "index": index,
                    "reason": f"the event is {len(raw)} bytes; it must be under "
                    f"{max_event_bytes} bytes of JSON",
                    "event": element,
                }
            )
            continue
        batch.valid.append(ValidEvent(index, element, raw))
    return batch
