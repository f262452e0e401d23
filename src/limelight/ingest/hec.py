"""Splunk's HTTP Event Collector: ``/event`` bodies (JSON objects one after another) and
``/raw`` bodies (lines) to documents, and Splunk's answer codes.

In an ``/event`` object, ``event`` is the event (an object as it is, anything else as
``message``), ``time`` (epoch seconds, fractions allowed) its time, ``host``,
``source``, ``sourcetype`` and the entries of ``fields`` its keys (where the event has
no key of their name), ``index`` its dataset. A ``/raw`` body is one event a line, a
line that is a JSON object keeping its fields; the query's ``host``, ``source``,
``sourcetype`` and ``index`` apply to every line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from limelight.errors import BadRequest
from limelight.event_json import has_big_integer, json_kind
from limelight.ingest.batch import IngestLimits
from limelight.ingest.concatenated import NotConcatenatedJson, TooDeep, concatenated_values
from limelight.ingest.documents import (
    TOO_DEEP,
    Document,
    DocumentsOutcome,
    Refusal,
    line_event,
    redacting,
    store_documents,
)
from limelight.ingest.nesting import MAX_EVENT_DEPTH
from limelight.ingest.service import DATASET_NAME, RowSink
from limelight.tenant import Tenant

DEFAULT_DATASET = "logs"
METADATA_KEYS = ("host", "source", "sourcetype")

# Splunk's answer codes: (HTTP status, code, text).
SUCCESS = (200, 0, "Success")
TOKEN_REQUIRED = (401, 2, "Token is required")
INVALID_AUTHORIZATION = (401, 3, "Invalid authorization")
INVALID_TOKEN = (403, 4, "Invalid token")
NO_DATA = (400, 5, "No data")
INVALID_DATA = (400, 6, "Invalid data format")
INCORRECT_INDEX = (400, 7, "Incorrect index")
INTERNAL = (500, 8, "Internal server error")
BUSY = (503, 9, "Server is busy")
EVENT_REQUIRED = (400, 12, "Event field is required")
EVENT_BLANK = (400, 13, "Event field cannot be blank")
ACK_DISABLED = (400, 14, "ACK is disabled")
HEALTHY = (200, 17, "HEC is healthy")

# A refused event's answer, by the refusal's kind (any other kind: invalid data format).
REFUSAL_CODES = {"invalid_index": INCORRECT_INDEX, "no_event": EVENT_REQUIRED,
                 "blank_event": EVENT_BLANK}  # fmt: skip


class HecError(BadRequest):
    """A refusal in Splunk's terms: its HTTP status, code and text."""

    def __init__(self, answer: tuple[int, int, str], invalid_event: int | None = None) -> None:
        status, code, text = answer
        extra: dict[str, Any] = {"code": code}
        if invalid_event is not None:
            extra["invalid-event-number"] = invalid_event
        super().__init__(text, message=text, extra=extra)
        self.http_status = status


def dataset_of(index: Any, default: str) -> str | Refusal:
    if index is None or index == "" or index == default:
        return default
    if isinstance(index, str) and DATASET_NAME.fullmatch(index):
        return index
    # Only text is shown: the repr of a list nested a thousand levels (the quick parse
    # reads 1,024 before any depth is checked) passes Python's recursion limit (a 500).
    shown = repr(index[:130]) if isinstance(index, str) else f"({json_kind(index)})"
    return Refusal("invalid_index", f"the index {shown} is not a dataset name")


_EPOCH = re.compile(r"[0-9]+(?:\.[0-9]*)?")


def _time_ms(value: Any) -> int | None | Refusal:
    if value is None:
        return None
    number = isinstance(value, int | float) and not isinstance(value, bool)
    text = isinstance(value, str) and _EPOCH.fullmatch(value.strip()) is not None
    try:
        seconds = float(value) if number or text else None
    except OverflowError:  # an integer beyond any float
        seconds = None
    # Past 1e13 seconds is no time at all (and orjson reads no NaN or infinity).
    if seconds is None or abs(seconds) > 1e13:
        return Refusal("invalid", "time must be epoch seconds (fractions allowed)")
    return round(seconds * 1000)


def with_metadata(event: dict[str, Any], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """``event`` with each metadata entry it has no key of its name."""
    for key, value in metadata.items():
        event.setdefault(key, value)
    return event


def event_document(value: Any, default_dataset: str, exact: bool) -> Document | Refusal:
    """One ``/event`` object as a document, or why it is refused."""
    if type(value) is not dict:
        return Refusal("not_an_object", "each event must be a JSON object")
    body = value.get("event", _ABSENT)
    if body is _ABSENT:
        return Refusal("no_event", "Event field is required")
    if body is None or body == "" or body == {}:
        return Refusal("blank_event", "Event field cannot be blank")
    fields = value.get("fields")
    if fields is not None and type(fields) is not dict:
        return Refusal("invalid", "fields must be an object")
    dataset = dataset_of(value.get("index"), default_dataset)
    if isinstance(dataset, Refusal):
        return dataset
    time_ms = _time_ms(value.get("time"))
    if isinstance(time_ms, Refusal):
        return time_ms
    # The parsed object is this request's own: its event is used in place.
    event = body if type(body) is dict else {"message": body}
    for key in METADATA_KEYS:
        meta = value.get(key)
        if type(meta) is str:
            event.setdefault(key, meta)
    if fields:
        with_metadata(event, fields)
    return Document(dataset, event, exact, time_ms)


_ABSENT = object()
_LINE_BREAK = re.compile(r"[\r\n]+")


def event_documents(
    body: bytes, default_dataset: str, limits: IngestLimits
) -> list[Document | Refusal]:
    if not body.strip():
        raise HecError(NO_DATA)
    try:
        values = concatenated_values(body, MAX_EVENT_DEPTH)
    except NotConcatenatedJson as exc:
        raise HecError(INVALID_DATA, exc.index) from None
    if len(values) > limits.max_events:
        raise BadRequest(f"more than {limits.max_events} events in one request")
    return [
        Refusal("too_deep", TOO_DEEP)
        if isinstance(v, TooDeep)
        else event_document(v.value, default_dataset, v.exact)
        for v in values
    ]


def raw_documents(
    body: bytes, dataset: str, metadata: Mapping[str, str], limits: IngestLimits
) -> list[Document | Refusal]:
    try:
        text = body.decode()
    except UnicodeDecodeError:
        raise HecError(INVALID_DATA) from None
    # Splunk breaks a raw body at carriage returns and line feeds alone; str.splitlines
    # also breaks at U+2028, U+0085, form feeds and more, which JSON strings hold raw.
    lines = [line for line in _LINE_BREAK.split(text) if line.strip()]
    if not lines:
        raise HecError(NO_DATA)
    if len(lines) > limits.max_events:
        raise BadRequest(f"more than {limits.max_events} events in one request")
    out: list[Document | Refusal] = []
    may_be_big = has_big_integer(body)
    for line in lines:
        event, exact = line_event({}, line, may_be_big)
        out.append(Document(dataset, with_metadata(event, metadata), exact))
    return out


@dataclass(frozen=True, slots=True)
class HecOutcome:
    outcome: DocumentsOutcome
    refused: HecError | None  # the first refused event, as Splunk answers it


def _first_refusal(outcome: DocumentsOutcome) -> HecError | None:
    for number, result in enumerate(outcome.results):
        if isinstance(result, Refusal):
            return HecError(REFUSAL_CODES.get(result.kind, INVALID_DATA), number)
    return None


def ingest_events(
    store: RowSink,
    tenant: Tenant,
    redact_secrets: bool,
    body: bytes,
    default_dataset: str,
    limits: IngestLimits,
) -> HecOutcome:
    """Decode an ``/event`` body and store its events; return after they are on disk."""
    items = event_documents(body, default_dataset, limits)
    outcome = store_documents(store, tenant, redacting(redact_secrets, body), items, limits)
    return HecOutcome(outcome, _first_refusal(outcome))


def ingest_raw(
    store: RowSink,
    tenant: Tenant,
    redact_secrets: bool,
    body: bytes,
    dataset: str,
    metadata: Mapping[str, str],
    limits: IngestLimits,
) -> HecOutcome:
    """Store a ``/raw`` body's lines; return after they are on disk."""
    items = raw_documents(body, dataset, metadata, limits)
    outcome = store_documents(store, tenant, redacting(redact_secrets, body), items, limits)
    return HecOutcome(outcome, _first_refusal(outcome))
