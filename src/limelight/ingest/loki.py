"""Loki's push API: each line of each stream to an event.

An event holds the stream's labels and the line's structured metadata as keys, and the
line as ``message``; a line that is a JSON object is the event itself, its fields
queryable as those of an Events API event, with the labels and metadata added where it
has no key of their name. The line's time (nanoseconds) is the event's; the service is
the label ``service_name``, else ``service``, else ``job``. The dataset is the
``x-dataset`` header, else the stream's label ``dataset``, else ``logs``.
"""

from __future__ import annotations

from dataclasses import dataclass

from limelight.errors import BadRequest
from limelight.event_json import has_big_integer
from limelight.ingest.batch import IngestLimits
from limelight.ingest.documents import (
    Document,
    DocumentsOutcome,
    Refusal,
    line_event,
    redacting,
    store_documents,
)
from limelight.ingest.loki_wire import Stream, decode_json, decode_protobuf, inflate
from limelight.ingest.service import DATASET_NAME, RowSink
from limelight.tenant import Tenant

DEFAULT_DATASET = "logs"
SERVICE_LABELS = ("service_name", "service", "job")
DATASET_LABEL = "dataset"


def _dataset(stream: Stream, header: str | None) -> str | Refusal:
    if header is not None:
        return header
    label = stream.labels.get(DATASET_LABEL)
    if label is None:
        return DEFAULT_DATASET
    if DATASET_NAME.fullmatch(label):
        return label
    return Refusal("invalid", f"the dataset label {label[:130]!r} is not a dataset name")


def _service(labels: dict[str, str]) -> str | None:
    return next((labels[name] for name in SERVICE_LABELS if labels.get(name)), None)


def streams_documents(
    streams: list[Stream], dataset: str | None, limits: IngestLimits, may_be_big: bool = True
) -> list[Document | Refusal]:
    """Every entry of every stream, in order, as a document or the reason it is refused."""
    if sum(len(s.entries) for s in streams) > limits.max_events:
        raise BadRequest(f"more than {limits.max_events} entries in one request")
    items: list[Document | Refusal] = []
    for stream in streams:
        target = _dataset(stream, dataset)
        service = _service(stream.labels)
        for entry in stream.entries:
            if isinstance(target, Refusal):
                items.append(target)
                continue
            base = {**stream.labels, **entry.metadata} if entry.metadata else stream.labels
            event, exact = line_event(base, entry.line, may_be_big)
            items.append(Document(target, event, exact, entry.time_ns // 1_000_000, service))
    return items


@dataclass(frozen=True, slots=True)
class LokiOutcome:
    outcome: DocumentsOutcome
    message: str  # why entries were refused ("" when none was)


def _refusals(outcome: DocumentsOutcome) -> str:
    refused = [(i, r) for i, r in enumerate(outcome.results) if isinstance(r, Refusal)]
    if not refused:
        return ""
    index, first = refused[0]
    return (
        f"{len(refused)} of {len(outcome.results)} entries refused; entry {index}: {first.reason}"
    )


def ingest_push(
    store: RowSink,
    tenant: Tenant,
    redact_secrets: bool,
    body: bytes,
    protobuf: bool,
    dataset: str | None,
    limits: IngestLimits,
    max_body_bytes: int,
) -> LokiOutcome:
    """Decode one push request and store its entries; return after they are on disk."""
    text = inflate(body, max_body_bytes) if protobuf else body
    streams = decode_protobuf(text) if protobuf else decode_json(text)
    items = streams_documents(streams, dataset, limits, has_big_integer(text))
    outcome = store_documents(store, tenant, redacting(redact_secrets, text), items, limits)
    return LokiOutcome(outcome, _refusals(outcome))
