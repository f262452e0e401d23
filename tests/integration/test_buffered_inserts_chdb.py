"""Small batches acknowledged from the write-ahead log (store.events.buffered), on chDB:
read back at once by the tenant that sent them, written as few large parts, exactly once
after a crash at any point, within their bounds, and one tenant's flood holds back no
other tenant."""

from __future__ import annotations

import errno
import os
import shutil
import threading
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from limelight.errors import StoreError, Unavailable
from limelight.store.events import wal
from limelight.store.events.base import EventRow, encode_rows
from limelight.store.events.buffered import GATHER_SECONDS, BufferedInserts, BufferLimits
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.tenant import Tenant
from tests import query_reference as ref

LAG = "limelight_ingest_buffer_lag_seconds"  # the gauge of the oldest wait

NOW_MS = 1_790_000_000_000
DAY_MS = 86_400_000
A = Tenant("ws_buffer_a", "env")
B = Tenant("ws_buffer_b", "env")


def rows(tag: str, n: int, at_ms: int = NOW_MS, raw: bytes | None = None) -> list[EventRow]:
    return [
        EventRow(
            dataset="buffered",
            service="svc",
            namespace="ns",
            timestamp_ms=at_ms + i,
            id=f"{tag}-{i:06d}",
            raw=raw if raw is not None else b'{"tag": "%s", "i": %d}' % (tag.encode(), i),
        )
        for i in range(n)
    ]


def record(tenant: Tenant, batch: Sequence[EventRow]) -> wal.Record:
    first = min(r.timestamp_ms for r in batch) // DAY_MS
    last = max(r.timestamp_ms for r in batch) // DAY_MS
    return wal.Record(tenant, len(batch), first, last, encode_rows(tenant, batch))


@pytest.fixture
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChdbEventStore]:
    """The process's engine, in a database of this test's, without a buffer of its own:
    the tests put one in front of it."""
    shared = ref.shared_chdb_store(tmp_path_factory)
    store = ChdbEventStore(shared.path, database=f"buffered_{uuid.uuid4().hex[:8]}")
    store.start()
    yield store
    store.close()


def stored(store: ChdbEventStore, tenant: Tenant) -> list[str]:
    sql = (
        f"SELECT id FROM {store.table} WHERE workspace_id = {{w:String}}"
        " AND environment_id = {e:String} ORDER BY id"
    )
    params = {"w": tenant.workspace_id, "e": tenant.environment_id}
    return [r["id"] for r in store.query(sql, params, ["id"]).rows]


def parts(store: ChdbEventStore) -> int:
    table = store.table.split(".")
    sql = (
        "SELECT count() AS n FROM system.parts WHERE database = {d:String}"
        " AND table = {t:String} AND active"
    )
    return int(store.query(sql, {"d": table[0], "t": table[1]}, ["n"]).rows[0]["n"])


class Engine:
    """The real engine with a gate every INSERT waits at and failures to inject: an
    INSERT listed in ``fail_after`` is written and then reported failed (the outcome a
    client cannot know), one in ``fail_before`` fails unwritten."""

    def __init__(self, store: ChdbEventStore) -> None:
        self.store = store
        self.gate = threading.Event()
        self.gate.set()
        self.inserts = 0
        self.fail_after: set[int] = set()
        self.fail_before: set[int] = set()
        self.entered = threading.Event()

    def insert_block(self, body: bytes) -> None:
        self.inserts += 1
        n = self.inserts
        self.entered.set()
        assert self.gate.wait(30)
        if n in self.fail_before:
            raise StoreError("the engine is unavailable", 209)
        self.store.insert_block(body)
        if n in self.fail_after:
            raise StoreError("timeout while writing", 159)

    def stored_ids(self, tenant: Tenant, ids: Sequence[str], first: int, last: int) -> set[str]:
        return self.store.stored_ids(tenant, ids, first, last)


def test_small_batches_are_read_back_at_once_from_few_parts(
    engine: ChdbEventStore, tmp_path: Path
) -> None:
    store = ChdbEventStore(engine.path, database=engine.table.split(".")[0], wal=tmp_path)
    store.start()
    try:
        threads = [
            threading.Thread(target=lambda c=c: store.insert(A, rows(f"c{c}", 10)))
            for c in range(40)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # Acknowledged: the read that follows sees all 400, whatever the inserter has done.
        assert len(stored(store, A)) == 400
        assert parts(store) < 10  # 40 batches: one INSERT each made 40 parts
        assert stored(store, B) == []
    finally:
        store.close()
    assert wal.segments(tmp_path) == []  # all written: nothing left in the log


def test_a_large_batch_goes_straight_to_the_engine(engine: ChdbEventStore, tmp_path: Path) -> None:
    store = ChdbEventStore(engine.path, database=engine.table.split(".")[0], wal=tmp_path)
    store.start()
    try:
        store.insert(A, rows("big", 6_000))
        assert store._buffer is not None and store._buffer.pending_bytes == 0
        assert len(stored(engine, A)) == 6_000
    finally:
        store.close()


def test_segments_left_by_a_crash_come_back_exactly_once(
    engine: ChdbEventStore, tmp_path: Path
) -> None:
    # A process died after writing the first block of its segment and before removing
    # the segment; a second segment was never written; the third was torn mid-record.
    first = wal.new_segment(tmp_path)
    first.write(record(A, rows("one", 30)).encode())
    first.write(record(B, rows("two", 20)).encode())
    first.close()
    engine.insert_block(encode_rows(A, rows("one", 30)))
    second = wal.new_segment(tmp_path)
    second.write(record(A, rows("three", 5)).encode())
    second.close()
    third = wal.new_segment(tmp_path)
    third.write(record(B, rows("four", 7)).encode())
    torn = record(B, rows("five", 7)).encode()
    third.write(torn[: len(torn) // 2])  # never acknowledged: its sync never came
    third.close()

    buffer = BufferedInserts(tmp_path, engine)
    buffer.start()
    try:
        buffer.flush_all(30)
    finally:
        buffer.close()
    assert stored(engine, A) == sorted(
        [r.id for r in rows("one", 30)] + [r.id for r in rows("three", 5)]
    )
    assert stored(engine, B) == sorted([r.id for r in rows("two", 20) + rows("four", 7)])
    assert wal.segments(tmp_path) == []


def test_an_insert_of_unknown_outcome_is_written_once(
    engine: ChdbEventStore, tmp_path: Path
) -> None:
    held = Engine(engine)
    held.fail_before = {1}  # the engine is away once
    held.fail_after = {2}  # then it writes the block and reports a failure
    buffer = BufferedInserts(tmp_path, held)
    buffer.start()
    try:
        buffer.append(record(A, rows("x", 50)))
        buffer.flush(A, 30)
    finally:
        buffer.close()
    assert held.inserts == 2  # the third try found every row stored
    assert stored(engine, A) == [r.id for r in rows("x", 50)]


def test_a_batch_the_engine_cannot_read_is_kept_aside_alone(
    engine: ChdbEventStore, tmp_path: Path
) -> None:
    buffer = BufferedInserts(tmp_path, engine)
    held = Engine(engine)
    held.gate.clear()  # both batches wait together in one segment
    buffer = BufferedInserts(tmp_path, held)
    buffer.start()
    try:
        good = rows("good", 5)
        bad = rows("bad", 3)
        bad_record = record(A, bad)
        bad_record.body = bad_record.body.replace(b"\t1790000000.000\t", b"\tnot a time\t", 1)
        buffer.append(record(A, good))
        buffer.append(bad_record)
        held.gate.set()
        buffer.flush(A, 30)
    finally:
        buffer.close()
    assert stored(engine, A) == [r.id for r in good]
    aside = list((tmp_path / "refused").iterdir())
    assert len(aside) == 1 and b"not a time" in aside[0].read_bytes()


def test_past_the_bounds_appends_are_refused_and_nothing_is_lost(
    engine: ChdbEventStore, tmp_path: Path
) -> None:
    held = Engine(engine)
    held.gate.clear()  # the engine is stuck
    one = len(record(A, rows("a0", 100)).body)
    buffer = BufferedInserts(tmp_path, held, BufferLimits(max_bytes=one * 8, max_lag=60))
    buffer.start()
    accepted: list[str] = []
    try:
        # A tenant holds at most a quarter of the bound: its third batch is refused...
        buffer.append(record(A, rows("a0", 100)))
        buffer.append(record(A, rows("a1", 100)))
        accepted += ["a0", "a1"]
        with pytest.raises(Unavailable) as refused:
            buffer.append(record(A, rows("a2", 100)))
        assert refused.value.headers["Retry-After"] == "2"
        # ...while another tenant's batches still go in.
        buffer.append(record(B, rows("b0", 100)))
        held.gate.set()
        buffer.flush_all(30)
    finally:
        buffer.close()
    assert stored(engine, A) == sorted(r.id for tag in accepted for r in rows(tag, 100))
    assert len(stored(engine, B)) == 100


def test_a_lagging_engine_refuses_each_tenant_once_its_own_records_waited(
    engine: ChdbEventStore, tmp_path: Path
) -> None:
    now = [1000.0]
    held = Engine(engine)
    held.gate.clear()
    buffer = BufferedInserts(tmp_path, held, BufferLimits(max_lag=5), clock=lambda: now[0])
    buffer.start()
    try:
        buffer.append(record(A, rows("early", 10)))
        now[0] += GATHER_SECONDS  # past the time a segment gathers
        assert held.entered.wait(30)  # its INSERT is stuck in the engine
        now[0] += 6
        with pytest.raises(Unavailable):  # A's records have waited past the bound
            buffer.append(record(A, rows("more", 10)))
        # The gauge says so while the INSERT is still stuck, not the wait it last saw.
        assert REGISTRY.get_sample_value(LAG) == GATHER_SECONDS + 6
        # B's have not: another's backlog does not refuse it...
        buffer.append(record(B, rows("late", 10)))
        now[0] += 6
        with pytest.raises(Unavailable):  # ...until its own have waited as long.
            buffer.append(record(B, rows("later", 10)))
        held.gate.set()
        buffer.flush(A, 30)
        buffer.flush(B, 30)
        buffer.append(record(B, rows("caught up", 10)))  # taken again
        buffer.flush(B, 30)
    finally:
        buffer.close()
    assert len(stored(engine, A)) == 10 and len(stored(engine, B)) == 20


def test_a_read_waits_only_for_its_own_tenant(engine: ChdbEventStore, tmp_path: Path) -> None:
    held = Engine(engine)
    buffer = BufferedInserts(tmp_path, held)
    buffer.start()
    try:
        buffer.append(record(A, rows("a", 10)))
        buffer.flush(A, 30)
        held.gate.clear()
        buffer.append(record(A, rows("a-more", 10)))
        assert held.entered.wait(30)
        buffer.flush(B, 0)  # nothing of B pending: no wait at all
        with pytest.raises(Unavailable):
            buffer.flush(A, 0.2)  # A's INSERT is stuck: the read is refused, not wrong
        held.gate.set()
        buffer.flush(A, 30)
    finally:
        buffer.close()
    assert len(stored(engine, A)) == 20


def test_a_needle_finds_the_events_of_a_block_just_written(
    engine: ChdbEventStore, tmp_path: Path
) -> None:
    """The log's blocks build the words index as they are written: a needle over them
    finds exactly the events holding the word."""
    from limelight.query.compile import RunOptions, Timeframe, compile_run
    from limelight.query.spec import validate_fields

    store = ChdbEventStore(engine.path, database=engine.table.split(".")[0], wal=tmp_path)
    store.start()
    try:
        for c in range(5):
            batch = rows(f"n{c}", 20)
            for i, row in enumerate(batch):
                word = b"upstream timeout" if i % 4 == 0 else b"all fine"
                row.raw = b'{"message": "%s", "i": %d}' % (word, i)
            store.insert(A, batch)
        plan = compile_run(
            validate_fields(
                {"calculations": [{"operator": "COUNT"}], "needle": {"value": "timeout"}}
            ),
            workspace_id=A.workspace_id,
            environment_id=A.environment_id,
            table=store.table,
            timeframe=Timeframe(NOW_MS - 3_600_000, NOW_MS + 3_600_000),
            options=RunOptions(),
        )
        statement = plan.statements.by_name()["aggregates"]
        found = store.query(statement.sql, statement.params).rows
        total = [r for r in found if r["_total"]]
        assert [r["_count"] for r in total] == [25]
    finally:
        store.close()


def test_many_tenants_small_batches_wait_together_for_one_insert_each(
    engine: ChdbEventStore, tmp_path: Path
) -> None:
    """Sixteen tenants' batches, more than a block's worth in all but far from one of any
    tenant, stay in one segment until a read asks for it: one INSERT a tenant, where a
    segment closed at a block's worth of all of them split each tenant's in two."""
    held = Engine(engine)
    tenants = [Tenant(f"ws_many_{i:02d}", "env") for i in range(16)]
    buffer = BufferedInserts(tmp_path, held, clock=lambda: 1000.0)  # the gathering never ends
    buffer.start()
    try:
        for round_no in range(10):
            for i, tenant in enumerate(tenants):
                buffer.append(record(tenant, rows(f"t{i}-r{round_no}", 100)))
        assert held.inserts == 0  # 16,000 events, none of them written yet
        buffer.flush_all(30)
    finally:
        buffer.close()
    assert held.inserts == len(tenants)
    for tenant in tenants:
        assert len(stored(engine, tenant)) == 1000, tenant


def test_a_block_of_one_tenant_is_written_without_waiting(
    engine: ChdbEventStore, tmp_path: Path
) -> None:
    held = Engine(engine)
    buffer = BufferedInserts(tmp_path, held, clock=lambda: 1000.0)
    buffer.start()
    try:
        buffer.append(record(B, rows("few", 10)))
        for c in range(12):
            buffer.append(record(A, rows(f"block{c}", 1000)))
        assert held.entered.wait(30)  # no read asked: a tenant's block's worth is written
    finally:
        buffer.close()
    assert len(stored(engine, A)) == 12_000 and len(stored(engine, B)) == 10


def test_a_batch_the_log_cannot_take_fails_and_is_never_inserted(
    engine: ChdbEventStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An append is written by the sync that acknowledges it: when that write fails (a
    full disk), its request fails, its rows never reach the engine (its client sends them
    again), its bytes stop counting against the bounds, and the log takes the next ones."""
    buffer = BufferedInserts(tmp_path, Engine(engine), BufferLimits(max_bytes=1 << 20))
    buffer.start()
    write = os.write
    full = True

    def failing(fd: int, data: bytes | memoryview) -> int:
        if full and fd not in (0, 1, 2):
            raise OSError(errno.ENOSPC, "No space left on device")
        return write(fd, data)

    try:
        buffer.append(record(A, rows("before", 3)))
        monkeypatch.setattr(wal.os, "write", failing)
        with pytest.raises(StoreError):
            buffer.append(record(A, rows("lost", 4)))
        full = False
        monkeypatch.undo()
        # The segment closes with the failed append its last: a close that raised for it
        # held up every later segment, and every read waited in vain.
        buffer.flush(A, 30)
        buffer.append(record(A, rows("after", 2)))
        buffer.flush(A, 30)
        assert buffer.pending_bytes == 0
    finally:
        buffer.close()
    expected = [r.id for tag in ("after", "before") for r in rows(tag, 3 if tag == "before" else 2)]
    assert stored(engine, A) == expected


def test_after_a_write_that_cannot_be_cut_off_appends_go_to_a_new_segment(
    engine: ChdbEventStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed write whose part stays in the file (its cut failed too) ends that file:
    the reader would stop at that part, so the next batches go to a new segment, and a
    crash then reads back every acknowledged batch."""
    held = Engine(engine)
    held.gate.clear()  # nothing leaves the log meanwhile
    log_dir = tmp_path / "wal"
    buffer = BufferedInserts(log_dir, held, BufferLimits(max_bytes=1 << 20))
    buffer.start()
    write = os.write

    def partly(fd: int, data: bytes | memoryview) -> int:
        write(fd, bytes(data)[:5])
        raise OSError(errno.ENOSPC, "No space left on device")

    def no_cut(fd: int, length: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    try:
        buffer.append(record(A, rows("before", 3)))
        monkeypatch.setattr(wal.os, "write", partly)
        monkeypatch.setattr(wal.os, "ftruncate", no_cut)
        with pytest.raises(StoreError):
            buffer.append(record(A, rows("lost", 4)))
        monkeypatch.undo()
        buffer.append(record(A, rows("after", 2)))
        # What a crash now would leave: both acknowledged batches read back.
        crashed = tmp_path / "crashed"
        shutil.copytree(log_dir, crashed)
        found = [r.rows for path in wal.segments(crashed) for r in wal.read_segment(path)]
        assert found == [3, 2]
        held.gate.set()
        buffer.flush(A, 30)
        assert buffer.pending_bytes == 0
    finally:
        held.gate.set()
        buffer.close()
    expected = [r.id for tag in ("after", "before") for r in rows(tag, 3 if tag == "before" else 2)]
    assert stored(engine, A) == expected
