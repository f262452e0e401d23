"""Elasticsearch's bulk API: an NDJSON body of actions to documents, and the answer's items.

Each action line (``{"create": {"_index": "app"}}``) names an action and its metadata;
``index`` and ``create`` are followed by the document's line, ``update`` by its
change, ``delete`` by nothing. ``index`` and ``create`` store their document in the
dataset the index names (``dataset_for_index``); ``update`` and ``delete`` are refused
item by item (events are not documents that change), and ``_type`` and the other
metadata are ignored. A line that is not an action, an unknown action or a missing
document line makes the body unusable: Elasticsearch answers those with a 400, and the
pairing of the lines after them could not be trusted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson

from limelight.errors import BadRequest
from limelight.event_json import has_big_integer
from limelight.ingest.batch import IngestLimits
from limelight.ingest.documents import (
    Document,
    DocumentsOutcome,
    Refusal,
    parse_object,
    redacting,
    store_documents,
)
from limelight.ingest.service import DATASET_NAME, RowSink
from limelight.tenant import Tenant

ACTIONS = ("index", "create", "update", "delete")
STORED_ACTIONS = ("index", "create")
_WITH_SOURCE = frozenset(("index", "create", "update"))

# Elasticsearch's name for each refusal, and the item status: 400 is what every shipper
# reads as "do not send this again" (Logstash retries anything but 400, 404 and 409).
ERROR_TYPES = {
    "too_deep": "document_parsing_exception",
    "too_large": "document_parsing_exception",
    "not_an_object": "document_parsing_exception",
    "invalid": "document_parsing_exception",
    "invalid_index": "invalid_index_name_exception",
    "unsupported_action": "illegal_argument_exception",
}
REFUSED_STATUS = 400

_NOT_IN_DATASET = re.compile(r"[^A-Za-z0-9._-]")


@lru_cache(maxsize=1024)  # a shipper names a few indexes, on every action
def dataset_for_index(index: str) -> str | None:
    """The dataset an index name stands for: each character other than a letter, a digit,
    ``.``, ``_`` or ``-`` becomes ``_``, and the name is cut to 128 characters. None for a
    name that is still no dataset name (empty, ``.`` or ``..``)."""
    name = _NOT_IN_DATASET.sub("_", index)[:128]
    return name if DATASET_NAME.fullmatch(name) else None


@dataclass(slots=True)
class BulkItem:
    action: str
    index: str | None  # as the request named it (the answer names it so)
    id: str | None
    item: Document | Refusal


def _lines(body: bytes) -> list[tuple[int, bytes]]:
    """The body's non-blank lines with their numbers (from 1); ``\r\n`` ends a line too."""
    stripped = ((n, raw.strip()) for n, raw in enumerate(body.split(b"\n"), 1))
    return [(n, line) for n, line in stripped if line]


def _action(number: int, line: bytes) -> tuple[str, dict[str, Any]]:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        value = None
    if not isinstance(value, dict) or len(value) != 1:
        raise BadRequest(
            f"Malformed action/metadata line [{number}], expected a JSON object with one "
            f"action of {list(ACTIONS)}"
        )
    ((action, meta),) = value.items()
    if action not in ACTIONS:
        raise BadRequest(
            f"Malformed action/metadata line [{number}], expected one of {list(ACTIONS)} "
            f"but found [{action}]"
        )
    if not isinstance(meta, dict):
        raise BadRequest(
            f"Malformed action/metadata line [{number}]: the metadata is not an object"
        )
    return action, meta


def _text(value: Any) -> str | None:
    """A metadata string; a number is read as its text, as Elasticsearch reads it
    (``"_index": 2024`` is the index ``2024``)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True, slots=True)
class _Action:
    """What an action line says, read once for all its repeats."""

    action: str
    index: str | None
    id: str | None
    target: str | Refusal  # the dataset of its document, or why it cannot have one


def _read_action(number: int, line: bytes, default_index: str | None) -> _Action:
    action, meta = _action(number, line)
    index = _text(meta.get("_index")) or default_index
    target: str | Refusal
    if action not in STORED_ACTIONS:
        target = Refusal(
            "unsupported_action",
            f"the {action} action is not supported: events are stored once and never "
            "changed; use index or create",
        )
    elif index is None:
        target = Refusal("invalid_index", "index is missing")
    else:
        dataset = dataset_for_index(index)
        target = dataset or Refusal(
            "invalid_index", f"Invalid index name [{index}]: no dataset name"
        )
    return _Action(action, index, _text(meta.get("_id")), target)


def _document(dataset: str, source: bytes, may_be_big: bool) -> Document | Refusal:
    if not may_be_big:  # the usual case, without a call more than it needs
        try:
            value = orjson.loads(source)
        except orjson.JSONDecodeError:
            pass
        else:
            if type(value) is dict:
                return Document(dataset, value)
    parsed = parse_object(source, may_be_big)
    if isinstance(parsed, Refusal):
        return parsed
    event, exact = parsed
    return Document(dataset, event, exact)


def parse_bulk(body: bytes, default_index: str | None, limits: IngestLimits) -> list[BulkItem]:
    """The body's actions in order, each with its document or the reason it is refused.

    Raises ``BadRequest`` when the body is unusable as a whole: empty, an action line
    that is not one, a document line missing, more actions than a request may hold.
    """
    items: list[BulkItem] = []
    lines = _lines(body)
    # Shippers repeat one action line ({"create":{"_index":"app"}}): read once.
    known: dict[bytes, _Action] = {}
    may_be_big = has_big_integer(body)
    at, count = 0, len(lines)
    while at < count:
        number, line = lines[at]
        at += 1
        found = known.get(line)
        if found is None:
            found = known[line] = _read_action(number, line, default_index)
        source = b""
        if found.action in _WITH_SOURCE:
            if at == count:
                raise BadRequest(
                    f"The bulk request must be terminated by a newline: the {found.action} "
                    f"action on line [{number}] has no document line"
                )
            source = lines[at][1]
            at += 1
        if len(items) >= limits.max_events:
            raise BadRequest(f"more than {limits.max_events} actions in one request")
        target = found.target
        item = target if isinstance(target, Refusal) else _document(target, source, may_be_big)
        items.append(BulkItem(found.action, found.index, found.id, item))
    if not items:
        raise BadRequest("request body is required: send NDJSON action and document lines")
    return items


def response_items(items: list[BulkItem], outcome: DocumentsOutcome) -> list[dict[str, Any]]:
    """One answer per action, in order, keyed by the action's name."""
    out: list[dict[str, Any]] = []
    for item, result in zip(items, outcome.results, strict=True):
        answer: dict[str, Any] = {"_index": item.index, "_id": item.id}
        if isinstance(result, Refusal):
            answer["status"] = REFUSED_STATUS
            answer["error"] = {"type": ERROR_TYPES[result.kind], "reason": result.reason}
        else:
            answer["_id"] = item.id or result
            answer |= CREATED
        out.append({item.action: answer})
    return out


CREATED: dict[str, Any] = {
    "_version": 1,
    "result": "created",
    "_shards": {"total": 1, "successful": 1, "failed": 0},
    "_seq_no": 0,
    "_primary_term": 1,
    "status": 201,
}


def ingest_bulk(
    store: RowSink,
    tenant: Tenant,
    redact_secrets: bool,
    body: bytes,
    default_index: str | None,
    limits: IngestLimits,
) -> tuple[list[BulkItem], DocumentsOutcome]:
    """Parse one bulk body and store its documents; return after they are on disk."""
    items = parse_bulk(body, default_index, limits)
    hint = redacting(redact_secrets, body)
    outcome = store_documents(store, tenant, hint, [i.item for i in items], limits)
    return items, outcome


def ingest_one(
    store: RowSink,
    tenant: Tenant,
    redact_secrets: bool,
    body: bytes,
    index: str,
    doc_id: str | None,
    limits: IngestLimits,
) -> tuple[BulkItem, DocumentsOutcome]:
    """Store the one document of ``POST /<index>/_doc``; return after it is on disk."""
    if not body.strip():
        raise BadRequest("request body is required")
    dataset = dataset_for_index(index)
    document = (
        _document(dataset, body, has_big_integer(body))
        if dataset is not None
        else Refusal("invalid_index", f"Invalid index name [{index}]: no dataset name")
    )
    item = BulkItem("create", index, doc_id, document)
    hint = redacting(redact_secrets, body)
    return item, store_documents(store, tenant, hint, [item.item], limits)
