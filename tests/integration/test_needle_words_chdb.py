"""Needles of letters go through the words index (DDL 0011): the same answers as reading
every event, whether the events were written before the index existed or after, and
without reading the events' text once the index is built."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from limelight.query.compile import RunOptions, compile_run
from limelight.query.plans import Timeframe
from limelight.query.spec import validate_fields
from limelight.store.events import ddl
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.tenant import Tenant
from tests import query_reference as ref

NOW_MS = 1_795_000_000_000
SPAN_MS = 3_600_000
TENANT = Tenant("ws_words", "env_words")
FRAME = Timeframe(NOW_MS - SPAN_MS, NOW_MS + 1)
NEEDLES = ["timeout", "imeou", "LOGIN", "alpha", "ta", "absentword", "messagealpha"]


def count(store: ChdbEventStore, needle: str) -> tuple[int, int]:
    """(events holding the needle, bytes the engine read to count them)."""
    plan = compile_run(
        validate_fields({"calculations": [{"operator": "COUNT"}], "needle": {"value": needle}}),
        workspace_id=TENANT.workspace_id,
        environment_id=TENANT.environment_id,
        table=store.table,
        timeframe=FRAME,
        options=RunOptions(),
    )
    statement = plan.statements.by_name()["aggregates"]
    result = store.query(statement.sql, statement.params)
    [total] = [int(r["_count"]) for r in result.rows if r["_total"]]
    return total, result.bytes_read


def expected(records: list[ref.Record], needle: str) -> int:
    return len(ref.select(records, {"needle": {"value": needle}}, FRAME.from_ms, FRAME.to_ms))


def _index_built(store: ChdbEventStore, database: str) -> bool:
    found = store.query(
        "SELECT count() AS n FROM system.mutations WHERE database = {db:String} AND NOT is_done",
        {"db": database},
        ["n"],
    )
    return int(found.rows[0]["n"]) == 0


def test_events_written_before_the_words_index_are_found_the_same_before_and_after_it_is_built(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = ref.shared_chdb_store(tmp_path_factory)
    database = f"words_{uuid.uuid4().hex[:8]}"
    store = ChdbEventStore(shared.path, database=database)
    older = [(v, text) for v, text in ddl.ddl_files() if v < 11]
    monkeypatch.setattr(ddl, "ddl_files", lambda: older)
    store.start()  # the schema of the version before the words index
    events = ref.generate_events(3000, seed=5, now_ms=NOW_MS, span_ms=SPAN_MS)
    records: list[Any] = []
    for i in range(0, len(events), 1000):
        records += ref.store_events(store, TENANT, "ds", events[i : i + 1000])
    before = {needle: count(store, needle)[0] for needle in NEEDLES}
    monkeypatch.undo()

    store.migrate()  # adds the index; the parts above get it in the background
    during = {needle: count(store, needle)[0] for needle in NEEDLES}
    deadline = time.monotonic() + 60
    while not _index_built(store, database) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _index_built(store, database)
    after = {needle: count(store, needle) for needle in NEEDLES}

    truth = {needle: expected(records, needle) for needle in NEEDLES}
    assert truth["timeout"] > 0 and truth["imeou"] == truth["timeout"] and truth["absentword"] == 0
    assert before == during == {needle: n for needle, (n, _) in after.items()} == truth
    # Answered from the index: the 3,000 events' text is never read for a word.
    raw_bytes = sum(len(r.raw) for r in records)
    assert all(read < raw_bytes / 10 for _, read in after.values()), after
    store.close()


def test_new_events_are_found_before_their_parts_merge_and_from_the_index_after(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # Inserts leave the needle indexes to merges (store.events.base.INSERT_SETTINGS).
    shared = ref.shared_chdb_store(tmp_path_factory)
    database = f"words_{uuid.uuid4().hex[:8]}"
    store = ChdbEventStore(shared.path, database=database)
    store.start()
    # A background merge of the inserts' parts would index them before the first count.
    store.command(f"SYSTEM STOP MERGES {store.table}")
    events = ref.generate_events(3000, seed=6, now_ms=NOW_MS, span_ms=SPAN_MS)
    records: list[Any] = []
    for i in range(0, len(events), 1000):
        records += ref.store_events(store, TENANT, "ds", events[i : i + 1000])
    raw_bytes = sum(len(r.raw) for r in records)
    truth = {needle: expected(records, needle) for needle in NEEDLES}
    unmerged = {needle: count(store, needle) for needle in NEEDLES}
    # Not indexed yet: a word is looked for in the text of every event.
    assert unmerged["timeout"][1] > raw_bytes / 2
    store.command(f"SYSTEM START MERGES {store.table}")
    store.command(f"OPTIMIZE TABLE {store.table} FINAL")
    merged = {needle: count(store, needle) for needle in NEEDLES}
    assert {n: c for n, (c, _) in unmerged.items()} == {n: c for n, (c, _) in merged.items()}
    assert {n: c for n, (c, _) in merged.items()} == truth
    assert all(read < raw_bytes / 10 for _, read in merged.values()), merged
    store.close()
