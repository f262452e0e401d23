"""The ingest pipeline: body -> validated, enriched rows -> the event store."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol

from limelight import metrics
from limelight.errors import BadRequest
from limelight.event_json import dumps_exact
from limelight.ids import new_id
from limelight.ingest.batch import IngestLimits, parse_batch
from limelight.ingest.enrich import event_time_ms, header_name, now_ms, pick_name
from limelight.ingest.past_days import PastDays
from limelight.ingest.redact import may_hold_secrets, redact
from limelight.store.events.base import MAX_DAYS_PER_INSERT, EventRow
from limelight.tenant import Tenant
from limelight.times import DAY_MS


class RowSink(Protocol):
    """Where stored rows go: the events store, or ``GroupCommit`` in front of it."""

    def insert(self, tenant: Tenant, rows: Sequence[EventRow]) -> None: ...


# Not "." or "..": browsers and clients resolve them as path segments, so such a dataset
# could be sent to but never opened (its console links led to other pages).
DATASET_NAME = re.compile(r"(?!\.\.?$)[A-Za-z0-9._-]{1,128}")


def check_dataset(name: str) -> str:
    if not DATASET_NAME.fullmatch(name):
        raise BadRequest(
            "invalid dataset name: use 1 to 128 letters, digits, '.', '_' or '-' "
            "(not '.' or '..' alone)"
        )
    return name


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a batch comes from: its tenant, dataset and the optional headers."""

    tenant: Tenant
    dataset: str
    service: str | None = None
    namespace: str | None = None
    redact_secrets: bool = True


@dataclass(slots=True)
class IngestOutcome:
    accepted: int
    invalid: list[dict[str, Any]]
    invalid_count: int = 0
    refused: Counter[str] = field(default_factory=Counter)  # by kind, for the metrics


def build_rows(
    origin: Origin, events: list[tuple[dict[str, Any], bytes]], may_hold_secrets: bool, exact: bool
) -> list[EventRow]:
    """Enrich events (already size-checked, serialised as ``raw``) into storable rows."""
    received = now_ms()
    batch_id = new_id()
    service = header_name(origin.service)
    namespace = header_name(origin.namespace)
    rows = []
    for i, (event, raw) in enumerate(events):
        if may_hold_secrets and origin.redact_secrets and redact(event):
            raw = dumps_exact(event, exact)
        rows.append(
            EventRow(
                dataset=origin.dataset,
                service=pick_name(service, event, "service"),
                namespace=pick_name(namespace, event, "namespace"),
                timestamp_ms=event_time_ms(event, received),
                id=f"{batch_id}{i:06x}",
                raw=raw,
            )
        )
    return rows


# The days a request's events may fall on. Each day is a part of its own, tens of
# files that merges never join with another day's: 2,000 events on 2,000 days (83 KB,
# an ingest key) made 2,000 parts, held the inserts of every tenant for 90 s and left
# 660 MB on disk. A backfill sends its days in requests of at most this many.
MAX_DAYS_PER_REQUEST = 100


def store_rows(
    store: RowSink, tenant: Tenant, rows: list[EventRow], past_days: PastDays | None
) -> None:
    """Store the rows durably: one INSERT, or one per 100 days of event time. A request
    whose events fall on more than ``MAX_DAYS_PER_REQUEST`` days, or on more past days
    than the environment's budget has left (``past_days``), is refused whole."""
    if not rows:
        return
    days = {r.timestamp_ms // DAY_MS for r in rows}
    if len(days) > MAX_DAYS_PER_REQUEST:
        raise BadRequest(
            f"a request's events fall on at most {MAX_DAYS_PER_REQUEST} days (UTC); this"
            f" one's fall on {len(days)}: send them in requests of fewer days",
            message="Too many days",
        )
    with past_days.admit(tenant, days) if past_days is not None else nullcontext():
        first = min(days)
        if max(days) - first < MAX_DAYS_PER_INSERT:
            _insert(store, tenant, rows)
            return
        chunks: dict[int, list[EventRow]] = {}
        for row in rows:
            chunk = (row.timestamp_ms // DAY_MS - first) // MAX_DAYS_PER_INSERT
            chunks.setdefault(chunk, []).append(row)
        for _, chunk_rows in sorted(chunks.items()):
            _insert(store, tenant, chunk_rows)


def _insert(store: RowSink, tenant: Tenant, rows: list[EventRow]) -> None:
    with metrics.INSERT_SECONDS.time():
        store.insert(tenant, rows)


def ingest_body(store: RowSink, origin: Origin, body: bytes, limits: IngestLimits) -> IngestOutcome:
    """Validate and store one Events API batch. Returns after the valid events are stored."""
    batch = parse_batch(body, limits)
    rows = build_rows(
        origin, [(v.event, v.raw) for v in batch.valid], may_hold_secrets(body), batch.exact
    )
    store_rows(store, origin.tenant, rows, limits.past_days)
    return IngestOutcome(
        accepted=len(rows),
        invalid=batch.invalid,
        invalid_count=batch.invalid_count,
        refused=batch.refused,
    )
