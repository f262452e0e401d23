"""A merge syncs the part it writes before the parts it merged are removed (DDL 0013):
the embedded engine removes them 30 seconds to minutes later, so an unsynced merged
part was the only copy of acknowledged events until the kernel wrote it back."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from limelight.store.events.base import EventRow, EventStore
from limelight.tenant import Tenant

NOW_MS = 1_790_000_000_000


def _file_syncs(store: EventStore) -> int:
    """The engine's count of fsync calls on files since it started (for the whole
    engine: every database of it)."""
    result = store.query(
        "SELECT sum(value) AS n FROM system.events WHERE event = 'FileSync'", {}, ["n"]
    )
    return int(result.rows[0]["n"])


@contextmanager
def _merges_stopped_but(store: EventStore, table: str) -> Iterator[None]:
    """No background merge but ``table``'s: the count of syncs is the engine's, and a
    merge of any other table with the setting (the other table of this database, the
    tables of other tests) would sync files in the measured window."""
    tables = store.query(
        "SELECT concat(database, '.', name) AS t FROM system.tables"
        " WHERE engine LIKE '%MergeTree' AND database != 'system'",
        {},
        ["t"],
    )
    others = [r["t"] for r in tables.rows if r["t"] != table]
    for other in others:
        store.command(f"SYSTEM STOP MERGES {other}")
    try:
        yield
    finally:
        for other in others:
            store.command(f"SYSTEM START MERGES {other}")


@pytest.mark.parametrize("table", ["events", "event_paths"])
def test_a_merge_syncs_its_part_before_it_replaces_the_merged_ones(
    store: EventStore, table: str
) -> None:
    tenant = Tenant(f"ws_merge_sync_{table}", "env")
    name = store.table if table == "events" else store.paths_table
    store.command(f"SYSTEM STOP MERGES {name}")
    try:
        for batch in range(3):  # three inserts: three parts in each table
            rows = [
                EventRow("merge", "svc", "ns", NOW_MS + i, f"m{batch}-{i}", b'{"k%d": 1}' % batch)
                for i in range(5)
            ]
            store.insert(tenant, rows)
    finally:
        store.command(f"SYSTEM START MERGES {name}")
    with _merges_stopped_but(store, name):
        before = _file_syncs(store)
        store.command(f"OPTIMIZE TABLE {name} FINAL")
        # Without min_rows_to_fsync_after_merge the merge writes its files unsynced (0).
        assert _file_syncs(store) > before
    database, table_name = name.split(".")
    parts = store.query(
        "SELECT count() AS n FROM system.parts WHERE database = {db:String}"
        " AND table = {t:String} AND active",
        {"db": database, "t": table_name},
        ["n"],
    )
    assert int(parts.rows[0]["n"]) == 1
    count = store.query(
        f"SELECT count() AS n FROM {store.table} WHERE workspace_id = {{w:String}}",
        {"w": tenant.workspace_id},
        ["n"],
    )
    assert int(count.rows[0]["n"]) == 15
