"""Small inserts acknowledged from the write-ahead log, written to the engine in blocks.

An INSERT into the embedded engine has a fixed cost whatever its size (its part, the
paths view, the sync, then the merges of its part): 10-event requests from 64 clients,
one INSERT each or grouped while the engine was busy (``ingest.group_commit``), went in
at 2,476 events/s where 6MB bodies went in at 19,376. Here a small batch is appended to
the log (``wal.py``) and answered once the log is synced; a background thread closes
the open segment when one tenant holds a block's worth of rows in it (``BLOCK_ROWS``,
``BLOCK_BYTES``; or all of them ``SEGMENT_BLOCKS`` blocks' worth), when its oldest record
has waited ``GATHER_SECONDS``, or when a read needs it, and writes it as one INSERT per
tenant and block, on ``WORKERS`` threads (the embedded engine's insert sessions), the
smallest tenants first. Tenants never share an INSERT: the engine types a path's arrays
per chunk of the text it parses (``query.keys``), so another tenant's events in the same
INSERT could change how a tenant's values are stored and the types its keys list.

Exactly once: a segment is removed only after every row of it is in the engine. A block
whose INSERT may have been written (the process died during it, or the engine failed
without saying it wrote nothing) is written again with only the rows whose ids the
engine does not hold: ids are unique (a batch's id, then the row's number), and an
INSERT of one tenant's block makes one part per day, written whole or not at all. The
engine's own deduplication (``insert_deduplication_token``) was not used: its log of
tokens is written without a sync, so after a machine crash a part could be there while
its token is not, and the block would be written twice.

Read your writes: ``flush(tenant)`` returns once every record of the tenant appended
before it was called is in the engine; the store calls it before a statement that names
a tenant with pending records, so a read sees every event acknowledged before it began.
It costs a dictionary look-up when nothing of the tenant is pending.

Bounded: records wait in memory (and in the log) up to ``max_bytes``, a tenant's up to a
quarter of that, and none longer than ``max_lag`` seconds: past either bound an append is
refused (503 with Retry-After) and nothing acknowledged is dropped. The time is each
tenant's own (its oldest pending record), so one tenant's backlog refuses only its own.
The pending bytes and the age of the oldest pending record are metrics; a failing INSERT
is a log line and is tried again, with a growing pause, until it succeeds.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from limelight import metrics
from limelight.errors import ControlFlow, StoreError, Unavailable
from limelight.store.events.base import MAX_DAYS_PER_INSERT, REFUSED_TEXT
from limelight.store.events.wal import (
    Record,
    SegmentFile,
    new_segment,
    read_segment,
    remove_segment,
    segments,
)
from limelight.tenant import Tenant

log = logging.getLogger("limelight.store.buffer")

# A block as large as a 6MB body: the largest INSERT that still writes a compact part
# (DDL 0012). On 2 cores, one session, events of 0.46 kB: 45k events/s in INSERTs of
# 12,000 against 32k in INSERTs of 1,000.
BLOCK_ROWS = 12_000
BLOCK_BYTES = 12 * 1024 * 1024  # encoded rows: each event's JSON twice (raw, data)
# How long the first record of a segment waits for others before the segment is written
# anyway (a read of its tenant does not wait for it: it asks for the segment at once).
# Each tenant's records are an INSERT of their own, whose fixed cost (its part, the paths
# view, the syncs, the merges) small blocks pay per event, so many tenants' small requests
# want a long wait: 10-event bodies from 64 clients of 16 tenants, two servers in turns,
# four runs each on a machine at load 6-8 (medians): 2,875 events/s at 354 µs of the
# server's CPU an event with 3 s, against 1,807 and 548 with 1 s (and 1,444 and 535
# with 1 s against 1,223 and 625 with 0.25 s, an earlier run).
GATHER_SECONDS = 3.0
# A segment is also written once one tenant holds a block's worth in it, or it holds this
# many blocks' worth in all: many tenants' records wait together for the gathering time
# where a segment closed at one block's worth of all of them made each tenant's INSERT a
# sixteenth of a block.
SEGMENT_BLOCKS = 4
# INSERTs at once: the embedded store's insert sessions (chdb_store.INSERT_SESSIONS).
WORKERS = 2
# A tenant may hold this share of ``max_bytes``: one tenant's flood leaves the rest to
# the others' requests.
TENANT_SHARE = 4
RETRY_FIRST, RETRY_MOST = 0.1, 5.0


class BlockWriter(Protocol):
    """What the buffer needs of the engine."""

    def insert_block(self, body: bytes) -> None:
        """INSERT encoded rows (``base.encode_rows``) at once."""

    def stored_ids(
        self, tenant: Tenant, ids: Sequence[str], first_ms: int, last_ms: int
    ) -> set[str]:
        """Which of ``ids`` (events of ``tenant`` stamped within the times) are stored."""


@dataclass(frozen=True, slots=True)
class BufferLimits:
    max_bytes: int = 256 * 1024 * 1024
    max_lag: float = 30.0  # seconds


DEFAULT_LIMITS = BufferLimits()


@dataclass(slots=True, eq=False)
class _Pending:
    seq: int
    record: Record
    size: int
    at: float  # when it was appended (or found in the log at start)
    done: bool = False  # in the engine


@dataclass(slots=True, eq=False)
class _Segment:
    path: Path
    records: list[_Pending]
    since: float  # when its first record was appended (or the segment was found)
    recovered: bool  # found at start: its blocks may be in the engine already
    file: SegmentFile[_Appended] | None = None
    rows: int = 0
    size: int = 0
    by_tenant: dict[Tenant, tuple[int, int]] = field(default_factory=dict)  # rows, bytes
    full: bool = False  # a block's worth of one tenant, or SEGMENT_BLOCKS blocks in all

    def add(self, pending: _Pending) -> None:
        self.records.append(pending)
        record = pending.record
        rows, size = self.by_tenant.get(record.tenant, (0, 0))
        rows, size = rows + record.rows, size + pending.size
        self.by_tenant[record.tenant] = (rows, size)
        self.rows += record.rows
        self.size += pending.size
        self.full = self.full or (
            rows >= BLOCK_ROWS
            or size >= BLOCK_BYTES
            or self.rows >= SEGMENT_BLOCKS * BLOCK_ROWS
            or self.size >= SEGMENT_BLOCKS * BLOCK_BYTES
        )


# An append waiting to be written to its segment's file: counted among the segment's
# records once it is there (``SegmentFile.sync_to``), so that no record the file lacks
# is ever inserted from memory.
_Appended = tuple[_Segment, Record, int]


@dataclass(slots=True)
class _TenantState:
    pending: dict[int, _Pending] = field(default_factory=dict)  # by seq, in seq order
    pending_bytes: int = 0  # of those and of its appends not yet written
    last_seq: int = -1


class _Stopped(ControlFlow):
    """The buffer is closing and gave up on the engine: the segment stays for next start."""


class BufferedInserts:
    def __init__(
        self,
        directory: Path,
        writer: BlockWriter,
        limits: BufferLimits | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._dir = directory
        self._writer = writer
        self._limits = limits or DEFAULT_LIMITS
        self._clock = clock
        self._changed = threading.Condition(threading.Lock())
        self._tenants: dict[Tenant, _TenantState] = {}
        self._lag_set_at = float("-inf")  # when an append last set the lag gauge
        self._sealed: list[_Segment] = []
        self._active: _Segment | None = None
        self._spare: SegmentFile[_Appended] | None = None
        self._seq = 0
        self._bytes = 0
        self._flush_wanted = False
        self._stopping = False
        self._give_up = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        """Read back the segments a previous process left, then start the inserter."""
        self._dir.mkdir(parents=True, exist_ok=True)
        for path in segments(self._dir):
            records = read_segment(path)
            if not records:
                remove_segment(path)
                continue
            pending = [self._track(r, self._count(r.tenant, len(r.body))) for r in records]
            self._sealed.append(_Segment(path, pending, self._clock(), recovered=True))
        if self._sealed:
            count = sum(len(s.records) for s in self._sealed)
            log.info("inserting %d records left in the write-ahead log", count)
        self._count_segments()
        self._stopping = False
        self._give_up.clear()
        self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="limelight-buffer")
        self._thread = threading.Thread(target=self._run, name="limelight-buffer", daemon=True)
        self._thread.start()

    def close(self, timeout: float = 30.0) -> None:
        """Write what is pending, for at most ``timeout`` seconds; what is left stays in the
        log for the next start."""
        thread = self._thread
        if thread is None:
            return
        with self._changed:
            self._stopping = True
            self._changed.notify_all()
        thread.join(timeout)
        if thread.is_alive():
            self._give_up.set()
            thread.join()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        for segment in [self._active, *self._sealed]:
            if segment is not None and segment.file is not None:
                segment.file.close(self._written, self._lost)
                if not segment.records:
                    remove_segment(segment.path)
        if self._spare is not None:
            self._spare.close()
            remove_segment(self._spare.path)
        self._thread = self._pool = self._active = self._spare = None
        self._sealed.clear()
        self._tenants.clear()
        self._bytes = 0
        metrics.INGEST_BUFFER_BYTES.set(0)
        metrics.INGEST_BUFFER_SEGMENTS.set(0)

    # -- requests ----------------------------------------------------------------------

    def append(self, record: Record) -> None:
        """Return once ``record`` is durable in the log (or raise ``Unavailable``)."""
        data = record.encode()
        size = len(record.body)
        with self._changed:
            self._admit(record.tenant, size)
            active = self._active
            if active is not None and active.file is not None and active.file.broken:
                # Its records so far are inserted from memory; appends go to a new file.
                self._sealed.append(active)
                self._changed.notify_all()
                active = self._active = None
                self._count_segments()
            if active is None:
                active = self._active = self._open_segment()
            assert active.file is not None
            self._count(record.tenant, size)
            end = active.file.write(data, (active, record, size))
            file = active.file
        file.sync_to(end, self._written, self._lost)

    def _written(self, appended: list[_Appended]) -> None:
        """Appends now in their segment's file: its records from here on."""
        with self._changed:
            for segment, record, size in appended:
                first = not segment.records
                if first:
                    segment.since = self._clock()
                segment.add(self._track(record, size))
                if first:
                    self._count_segments()
                if segment.full:
                    self._changed.notify_all()

    def _lost(self, appended: list[_Appended]) -> None:
        """Appends their file could not take: their requests fail, nothing is inserted."""
        with self._changed:
            for _, record, size in appended:
                self._count(record.tenant, -size)

    def flush(self, tenant: Tenant, timeout: float) -> None:
        """Return once every record of ``tenant`` appended before this call is in the engine."""
        with self._changed:
            state = self._tenants.get(tenant)
            if state is None or not state.pending:
                return
            target = state.last_seq
            deadline = self._clock() + timeout
            self._flush_wanted = True
            self._changed.notify_all()
            while state.pending and next(iter(state.pending)) <= target:
                left = deadline - self._clock()
                if left <= 0:
                    raise Unavailable(
                        "recent events of this environment are still being stored; try again",
                        retry_after=1,
                    )
                self._changed.wait(left)

    def pending_tenants(self) -> list[Tenant]:
        if not self._tenants:  # the usual answer, without the lock (a read of one dict)
            return []
        with self._changed:
            return [t for t, s in self._tenants.items() if s.pending]

    def flush_all(self, timeout: float) -> None:
        for tenant in self.pending_tenants():
            self.flush(tenant, timeout)

    @property
    def pending_bytes(self) -> int:
        return self._bytes

    def _admit(self, tenant: Tenant, size: int) -> None:
        """Refuse an append past the bounds (called under the lock)."""
        # The gauge is set here too, not only between segments: while one INSERT is
        # stuck it showed the wait it had when the segment was taken (3 s for a minute
        # and a half, in a review), however long the records behind it had waited. At
        # most once a second: it visits every tenant with records waiting.
        now = self._clock()
        if now - self._lag_set_at >= 1.0:
            self._lag_set_at = now
            metrics.INGEST_BUFFER_LAG.set(self._lag())
        reason = None
        if self._stopping or self._thread is None:
            reason, text = "stopping", "the server is stopping"
        elif self._bytes + size > self._limits.max_bytes:
            reason, text = "full", "events wait for the store beyond its bound"
        else:
            state = self._tenants.get(tenant)
            held = state.pending_bytes if state is not None else 0
            if held + size > self._limits.max_bytes // TENANT_SHARE:
                reason, text = "tenant_full", "this environment's events wait beyond its bound"
            elif state is not None and self._waited(state) > self._limits.max_lag:
                # The environment's own oldest record: another's backlog (a request of
                # many days, a flood) holds up its own requests only. A stuck engine
                # still refuses everyone, each once its own record has waited.
                reason, text = "lagging", "the store is behind"
        if reason is not None:
            metrics.INGEST_BUFFER_REFUSED.labels(reason).inc()
            raise Unavailable(f"{text}; try again later", retry_after=2)

    def _count(self, tenant: Tenant, size: int) -> int:
        """Count ``size`` bytes (less, when negative) among the tenant's and the buffer's
        (called under the lock): appended bytes count against the bounds at once."""
        state = self._tenants.get(tenant)
        if state is None:
            state = self._tenants[tenant] = _TenantState()
        state.pending_bytes += size
        self._bytes += size
        if not state.pending and not state.pending_bytes:
            del self._tenants[tenant]
        metrics.INGEST_BUFFER_BYTES.set(self._bytes)
        return size

    def _track(self, record: Record, size: int) -> _Pending:
        """A record in the log, its bytes counted (``_count``), pending until inserted."""
        pending = _Pending(self._seq, record, size, self._clock())
        self._seq += 1
        state = self._tenants[record.tenant]
        state.pending[pending.seq] = pending
        state.last_seq = pending.seq
        return pending

    def _open_segment(self) -> _Segment:
        file = self._spare if self._spare is not None else new_segment(self._dir)
        self._spare = None
        return _Segment(file.path, [], self._clock(), recovered=False, file=file)

    def _waited(self, state: _TenantState) -> float:
        """Seconds the tenant's oldest pending record has waited."""
        first = next(iter(state.pending.values()), None)
        return max(0.0, self._clock() - first.at) if first is not None else 0.0

    def _lag(self) -> float:
        """Seconds the oldest pending record of any tenant has waited (the metric)."""
        return max((self._waited(s) for s in self._tenants.values()), default=0.0)

    def _count_segments(self) -> None:
        """The gauge of segments holding records (called under the lock, or before the
        inserter starts)."""
        held = len(self._sealed) + (self._active is not None and bool(self._active.records))
        metrics.INGEST_BUFFER_SEGMENTS.set(held)

    # -- the inserter ------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            self._prepare_spare()
            segment = self._next_segment()
            if segment is None:
                return
            try:
                self._insert(segment)
            except _Stopped:
                return
            except Exception:
                # Not the engine's failure (those are retried block by block): the log's
                # own, say. The segment is tried again; what it wrote is not written twice.
                log.exception("cannot write a write-ahead log segment to the events store")
                segment.recovered = True
                if self._give_up.wait(RETRY_MOST):
                    return
                continue
            with self._changed:
                self._sealed.remove(segment)
                self._count_segments()
                self._changed.notify_all()
                metrics.INGEST_BUFFER_LAG.set(self._lag())
            remove_segment(segment.path)

    def _prepare_spare(self) -> None:
        """A segment ready for the appends after the next seal, opened (and its name
        synced) outside the lock, so that no request waits for it."""
        with self._changed:
            if self._spare is not None:
                return
        try:
            spare = new_segment(self._dir)
        except OSError:
            log.exception("cannot open a write-ahead log segment")
            return
        with self._changed:
            if self._spare is None:
                self._spare = spare
                return
        spare.close()
        remove_segment(spare.path)

    def _next_segment(self) -> _Segment | None:
        """The oldest sealed segment; the open one is sealed when it is full, old enough,
        asked for by a read, or the buffer stops. None when stopping with nothing left."""
        with self._changed:
            while True:
                metrics.INGEST_BUFFER_LAG.set(self._lag())
                if self._sealed:
                    return self._sealed[0]
                active = self._active
                if active is None or not active.records:
                    if self._stopping:
                        return None
                    self._changed.wait(1.0)
                    continue
                waited = self._clock() - active.since
                if self._stopping or self._flush_wanted or waited >= GATHER_SECONDS or active.full:
                    self._flush_wanted = False
                    self._sealed.append(active)
                    self._active = None
                    continue
                self._changed.wait(min(1.0, GATHER_SECONDS - waited))

    def _insert(self, segment: _Segment) -> None:
        """Every record of the segment into the engine, in blocks of one tenant."""
        if segment.file is not None:
            segment.file.close(self._written, self._lost)  # writes the last appends
            segment.file = None
        blocks = plan_blocks([p for p in segment.records if not p.done], self._tenants_bytes())
        assert self._pool is not None
        futures: list[Future[None]] = [
            self._pool.submit(self._write, block, segment.recovered) for block in blocks
        ]
        failed: BaseException | None = None
        for future in futures:
            try:
                future.result()
            except BaseException as exc:
                failed = exc
        if failed is not None:
            raise failed

    def _tenants_bytes(self) -> dict[Tenant, int]:
        with self._changed:
            return {t: s.pending_bytes for t, s in self._tenants.items()}

    def _write(self, block: list[_Pending], uncertain: bool) -> None:
        """Write the block, trying again until the engine takes it; only the rows it does
        not hold when an earlier try may have written it. Then its records are done."""
        pause = RETRY_FIRST
        while True:
            try:
                try:
                    self._write_once(block, uncertain)
                except StoreError as exc:
                    if not _refused_unwritten(exc):
                        raise
                    self._write_alone(block, uncertain)
                break
            except StoreError as exc:
                uncertain = True
                metrics.INGEST_BUFFER_FAILURES.inc()
                log.warning(
                    "the events store failed an INSERT of %d events; trying again in %.1f s: %s",
                    sum(p.record.rows for p in block),
                    pause,
                    exc,
                )
            if self._give_up.wait(pause):
                raise _Stopped
            pause = min(pause * 2, RETRY_MOST)
        self._done(block)

    def _write_once(self, block: list[_Pending], uncertain: bool) -> None:
        body = b"\n".join(p.record.body for p in block)
        if uncertain:
            body = self._missing(block[0].record.tenant, body)
            if not body:
                return
        self._writer.insert_block(body)

    def _write_alone(self, block: list[_Pending], uncertain: bool) -> None:
        """The engine refused the block's text before writing any of it: each record
        alone, so that one request's rows the engine cannot read hold back no other's. A
        record refused alone is kept aside in ``refused/`` with a log line."""
        for pending in block:
            try:
                self._write_once([pending], uncertain)
            except StoreError as exc:
                if not _refused_unwritten(exc):
                    raise
                self._keep_aside(pending, exc)

    def _keep_aside(self, pending: _Pending, exc: StoreError) -> None:
        aside = self._dir / "refused"
        aside.mkdir(exist_ok=True)
        path = aside / f"{time.time_ns()}-{pending.seq}.tsv"
        path.write_bytes(pending.record.body + b"\n")
        metrics.INGEST_BUFFER_KEPT_ASIDE.inc(pending.record.rows)
        log.error(
            "the events store refused %d acknowledged events; they are kept in %s: %s",
            pending.record.rows,
            path,
            exc,
        )

    def _missing(self, tenant: Tenant, body: bytes) -> bytes:
        """The lines of ``body`` whose event ids the engine does not hold."""
        lines = body.split(b"\n")
        keys = [_id_and_time(line) for line in lines]
        times = [ms for _, ms in keys]
        # A second either side: a time before 1970 is written as -S.mmm, which the engine
        # reads a second lower than these milliseconds say.
        stored = self._writer.stored_ids(
            tenant, [i for i, _ in keys], min(times) - 1000, max(times) + 1000
        )
        return b"\n".join(line for line, (i, _) in zip(lines, keys, strict=True) if i not in stored)

    def _done(self, block: list[_Pending]) -> None:
        with self._changed:
            for pending in block:
                pending.done = True
                state = self._tenants[pending.record.tenant]
                del state.pending[pending.seq]
                state.pending_bytes -= pending.size
                self._bytes -= pending.size
                if not state.pending and not state.pending_bytes:
                    del self._tenants[pending.record.tenant]
            metrics.INGEST_BUFFER_BYTES.set(self._bytes)
            self._changed.notify_all()


def plan_blocks(records: Sequence[_Pending], held: dict[Tenant, int]) -> list[list[_Pending]]:
    """The segment's records as INSERTs: one tenant's each, in the order they came, within
    ``BLOCK_ROWS``, ``BLOCK_BYTES`` and 100 days; the tenants holding least first, so a
    tenant's few events are not queued behind another's flood."""
    by_tenant: dict[Tenant, list[_Pending]] = {}
    for pending in records:
        by_tenant.setdefault(pending.record.tenant, []).append(pending)
    blocks: list[list[_Pending]] = []
    for tenant in sorted(by_tenant, key=lambda t: held.get(t, 0)):
        block: list[_Pending] = []
        rows = size = 0
        first = last = 0
        for pending in by_tenant[tenant]:
            r = pending.record
            if block and (
                rows + r.rows > BLOCK_ROWS
                or size + pending.size > BLOCK_BYTES
                or max(last, r.last_day) - min(first, r.first_day) >= MAX_DAYS_PER_INSERT
            ):
                blocks.append(block)
                block, rows, size = [], 0, 0
            if not block:
                first, last = r.first_day, r.last_day
            block.append(pending)
            rows += r.rows
            size += pending.size
            first, last = min(first, r.first_day), max(last, r.last_day)
        if block:
            blocks.append(block)
    return blocks


def _id_and_time(line: bytes) -> tuple[str, int]:
    """The id and the time in milliseconds of an encoded row (``encode_rows``)."""
    fields = line.split(b"\t", 7)
    seconds, _, millis = fields[5].partition(b".")
    return fields[6].decode(), int(seconds) * 1000 + int(millis or b"0")


def _refused_unwritten(exc: StoreError) -> bool:
    return exc.code in REFUSED_TEXT
