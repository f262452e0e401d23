"""Events decoded from another shipper's format (Elasticsearch bulk, Loki, Splunk HEC) to
stored rows: the Events API's checks, enrichment, redaction and durability, per document.

A decoder turns its body into ``Document``s, each with its own dataset (an index, a
stream's label) and, where the format carries one outside the event, its time and
service. ``store_documents`` checks each one as the Events API checks an event (128
levels of nesting, the event size limit), refuses the ones that fail with a kind and a
reason, stores the others in one INSERT (one per 100 days, as ``store_rows`` does) and
returns only once they are on disk, with the id of each stored event.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from limelight.errors import PayloadTooLarge
from limelight.event_json import dumps_exact, loads_exact
from limelight.ids import new_id
from limelight.ingest.batch import IngestLimits
from limelight.ingest.enrich import (
    EARLIEST_MS,
    FUTURE_SLACK_MS,
    event_time_ms,
    header_name,
    now_ms,
    pick_name,
)
from limelight.ingest.nesting import MAX_EVENT_DEPTH, may_nest_deeper_than, nests_deeper_than
from limelight.ingest.redact import may_hold_secrets, redact
from limelight.ingest.service import RowSink, store_rows
from limelight.store.events.base import EventRow
from limelight.tenant import Tenant

TOO_DEEP = f"the event nests objects and arrays more than {MAX_EVENT_DEPTH} levels deep"


@dataclass(slots=True)
class Document:
    """One event to store, from whichever format carried it."""

    dataset: str
    event: dict[str, Any]
    exact: bool = False  # holds integers beyond 64 bits (parsed by the standard library)
    time_ms: int | None = None  # the format's own time for it (Loki's, HEC's), else None
    service: str | None = None  # the format's service for it (a Loki label), else None


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a document was not stored: ``kind`` for the metrics, ``reason`` for the client."""

    kind: str
    reason: str


@dataclass(slots=True)
class DocumentsOutcome:
    """Per document, in order: the stored event's id, or the ``Refusal``."""

    results: list[str | Refusal]
    refused: Counter[str] = field(default_factory=Counter)

    @property
    def accepted(self) -> int:
        return sum(1 for r in self.results if isinstance(r, str))


def parse_object(
    text: bytes | str, may_be_big: bool = True
) -> tuple[dict[str, Any], bool] | Refusal:
    """A JSON object and whether it holds integers beyond 64 bits, or why it is not one.

    ``may_be_big=False``: the request's text holds no such integer (``has_big_integer``
    of the whole body, one pass where a test of each document cost 1.4 µs an event more).
    """
    try:
        if may_be_big:
            value, exact = loads_exact(text.encode() if isinstance(text, str) else text)
        else:
            value, exact = orjson.loads(text), False
    except orjson.JSONDecodeError as exc:
        # orjson stops at 1,024 levels ("depth limit exceeded"); anything deeper than an
        # event may nest is refused as such, not as "not JSON".
        if "depth limit" in str(exc):
            return Refusal("too_deep", TOO_DEEP)
        return Refusal("invalid", f"the document is not valid JSON ({exc})")
    except RecursionError:  # deeper than the standard library reads
        return Refusal("too_deep", TOO_DEEP)
    if not isinstance(value, dict):
        return Refusal("not_an_object", "the document is not a JSON object")
    return value, exact


def line_event(
    base: dict[str, str], line: str, may_be_big: bool = True
) -> tuple[dict[str, Any], bool]:
    """The event of one line: a line that is a JSON object with each entry of ``base``
    (labels, metadata) it has no key of, else ``base`` with the line as ``message``."""
    text = line.strip()
    if text.startswith("{") and text.endswith("}"):
        parsed = parse_object(text, may_be_big)
        if not isinstance(parsed, Refusal):
            own, exact = parsed
            for key, value in base.items():
                own.setdefault(key, value)
            return own, exact
    return {**base, "message": line}, False


def serialised(doc: Document, limits: IngestLimits) -> bytes | Refusal:
    """The document's event as JSON, or why it cannot be stored (as the Events API says)."""
    try:
        raw = dumps_exact(doc.event, doc.exact)
    except (TypeError, RecursionError):  # orjson's JSONEncodeError: deeper than it writes
        return Refusal("too_deep", TOO_DEEP)
    if may_nest_deeper_than(raw, MAX_EVENT_DEPTH) and nests_deeper_than(doc.event, MAX_EVENT_DEPTH):
        return Refusal("too_deep", TOO_DEEP)
    if len(raw) >= limits.max_event_bytes:
        return Refusal(
            "too_large",
            f"the event is {len(raw)} bytes; it must be under {limits.max_event_bytes} bytes "
            "of JSON",
        )
    return raw


def _time_ms(doc: Document, received: int) -> int:
    """The format's time when it is a plausible one (as the Events API judges an event's
    own), else the event's ``timestamp`` fields, else the receive time."""
    if doc.time_ms is not None and EARLIEST_MS <= doc.time_ms <= received + FUTURE_SLACK_MS:
        return doc.time_ms
    return event_time_ms(doc.event, received)


def document_rows(docs: Sequence[tuple[Document, bytes]], redacting: bool) -> list[EventRow]:
    """Enrich checked documents (with their JSON) into rows. With ``redacting`` (the
    request's text holds something like a secret's key), each event whose own text may
    hold one is walked and redacted, as the Events API redacts."""
    received = now_ms()
    batch_id = new_id()
    rows = []
    for i, (doc, raw) in enumerate(docs):
        if redacting and may_hold_secrets(raw) and redact(doc.event):
            raw = dumps_exact(doc.event, doc.exact)
        rows.append(
            EventRow(
                dataset=doc.dataset,
                service=pick_name(header_name(doc.service), doc.event, "service"),
                namespace=pick_name(None, doc.event, "namespace"),
                timestamp_ms=_time_ms(doc, received),
                id=f"{batch_id}{i:06x}",
                raw=raw,
            )
        )
    return rows


def redacting(redact_secrets: bool, text: bytes) -> bool:
    """Whether a request's events are to be tested for secrets' keys: the environment
    redacts, and its uncompressed ``text`` may hold one (one pass over it)."""
    return redact_secrets and may_hold_secrets(text)


def store_documents(
    store: RowSink,
    tenant: Tenant,
    redacting: bool,
    items: Sequence[Document | Refusal],
    limits: IngestLimits,
) -> DocumentsOutcome:
    """Store every ``Document`` of ``items`` that passes the checks; return after they
    are on disk. ``items`` may hold the decoder's own refusals, kept in their place.
    ``redacting``: the environment redacts and the request's uncompressed text may hold
    a secret's key (``redacting()``); a request without any is spared the test of each
    event, as the Events API spares it.

    Raises ``PayloadTooLarge`` when the stored JSON would pass the request's bound (labels
    repeated on every line of a Loki stream make the events larger than the body).
    """
    results: list[str | Refusal] = []
    checked: list[tuple[Document, bytes]] = []
    places: list[int] = []
    stored = 0
    for item in items:
        checked_item = item if isinstance(item, Refusal) else serialised(item, limits)
        if isinstance(checked_item, Refusal):
            results.append(checked_item)
            continue
        assert isinstance(item, Document)
        stored += len(checked_item)
        if stored > limits.max_stored_bytes:
            raise PayloadTooLarge(
                f"the request expands to more than {limits.max_stored_bytes} bytes of events; "
                "send smaller batches"
            )
        places.append(len(results))
        results.append("")  # the event's id, once its row is made
        checked.append((item, checked_item))
    rows = document_rows(checked, redacting)
    for place, row in zip(places, rows, strict=True):
        results[place] = row.id
    store_rows(store, tenant, rows, limits.past_days)
    refused = Counter(r.kind for r in results if isinstance(r, Refusal))
    return DocumentsOutcome(results, refused)
