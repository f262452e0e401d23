"""One OTLP export request -> stored events, and the counts for the response."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from limelight.errors import PayloadTooLarge
from limelight.event_json import dumps_exact
from limelight.ingest.batch import IngestLimits
from limelight.ingest.nesting import MAX_EVENT_DEPTH, may_nest_deeper_than, nests_deeper_than
from limelight.ingest.otlp.codec import ID_RULES, Encoding, decode_request
from limelight.ingest.otlp.common import Rejections
from limelight.ingest.otlp.signals import Signal
from limelight.ingest.redact import BODY_HINTS, PROTOBUF_HINTS, may_hold_secrets, redact
from limelight.ingest.service import Origin, RowSink, build_rows, store_rows
from limelight.store.events.base import EventRow


@dataclass(frozen=True, slots=True)
class OtlpOutcome:
    accepted: int
    rejected: int
    message: str  # why items were rejected, for partial_success.error_message
    refused: Counter[str] = field(default_factory=Counter)  # by kind, for the metrics


def otlp_rows(
    signal: Signal, origin: Origin, body: bytes, encoding: Encoding, limits: IngestLimits
) -> tuple[list[EventRow], Rejections]:
    """Decode, map and enrich; the rows to store and what was left out."""
    request = decode_request(signal, body, encoding)
    rejections = Rejections(ID_RULES[encoding])
    groups = signal.mapper(request, rejections)
    # Attribute keys travel as plain text in protobuf too, so the same cheap
    # whole-body test as the Events API, with protobuf's hints, decides whether to walk
    # the events.
    hints = PROTOBUF_HINTS if encoding is Encoding.PROTOBUF else BODY_HINTS
    redacting = origin.redact_secrets and may_hold_secrets(body, hints)
    too_large = f"{signal.items} of {limits.max_event_bytes} bytes or more as JSON"
    # Dotted attribute keys nest: a key with 300 dots is 300 levels.
    too_deep = f"{signal.items} nesting objects and arrays more than {MAX_EVENT_DEPTH} levels deep"
    stored = 0
    rows: list[EventRow] = []
    for group in groups:
        sized = []
        for event in group.events:
            # Redact before serialising: resource dicts are shared by the
            # events of a group, and redaction is idempotent.
            if redacting:
                redact(event)
            raw = _serialised(event)
            if raw is None:
                rejections.add(too_deep, kind="too_deep")
                continue
            if len(raw) >= limits.max_event_bytes:
                rejections.add(too_large, kind="too_large")
                continue
            stored += len(raw)
            if stored > limits.max_stored_bytes:
                raise PayloadTooLarge(
                    f"the request expands to more than {limits.max_stored_bytes} bytes of "
                    "events (each event repeats its resource); send smaller batches"
                )
            sized.append((event, raw))
        if sized:
            # The resource's service and namespace act like the Events API's
            # x-service / x-namespace headers for its events.
            group_origin = replace(origin, service=group.service, namespace=group.namespace)
            rows.extend(build_rows(group_origin, sized, may_hold_secrets=False, exact=False))
    return rows, rejections


def _serialised(event: dict[str, Any]) -> bytes | None:
    """The event as JSON, or None when it nests deeper than an event may."""
    try:
        raw = dumps_exact(event, False)
    except TypeError:  # orjson's JSONEncodeError: deeper than it writes
        return None
    if may_nest_deeper_than(raw, MAX_EVENT_DEPTH) and nests_deeper_than(event, MAX_EVENT_DEPTH):
        return None
    return raw


def ingest_otlp(
    store: RowSink,
    signal: Signal,
    origin: Origin,
    body: bytes,
    encoding: Encoding,
    limits: IngestLimits,
) -> OtlpOutcome:
    """Store the accepted items of one request (one insert); return after they are stored."""
    rows, rejections = otlp_rows(signal, origin, body, encoding, limits)
    store_rows(store, origin.tenant, rows, limits.past_days)
    message = rejections.message()
    if message:
        message = f"{signal.items} rejected: {message}"
    return OtlpOutcome(
        accepted=len(rows), rejected=rejections.count, message=message, refused=rejections.kinds
    )
