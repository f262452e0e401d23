"""The fresh schema (``store/events/fresh_schema.json``) is what the DDL files make.

A new embedded database is given the schema the files leave, in a few statements,
instead of the files one by one (``ddl.FreshSchema``). Here the files are replayed into
one database and the schema is read back from the engine; it must be the file's. After a
new DDL file or another chDB, rewrite it with ``UPDATE_GOLDEN=1 pytest
tests/integration/test_fresh_schema_chdb.py`` and review the diff. Then a store started
on a new database must hold exactly what the replay made, with every file's version
recorded.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from limelight.errors import StoreError
from limelight.store.events import ddl
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.store.events.ddl import (
    BEGUN,
    DB_PLACEHOLDER,
    FRESH_SCHEMA_FILE,
    VERSIONS_TABLE,
    FreshSchema,
)
from limelight.tenant import Tenant
from tests import query_reference as ref

FILE = Path(ddl.__file__).parent / FRESH_SCHEMA_FILE


def _objects(store: ChdbEventStore, database: str) -> list[str]:
    """Each table and view of ``database`` but the versions, as ``SHOW CREATE`` writes it,
    with ``{db}`` for the database: the tables before the views that read them."""
    rows = store.query(
        "SELECT name, engine FROM system.tables WHERE database = {d:String}"
        " AND name != {v:String} ORDER BY endsWith(engine, 'View'), name",
        {"d": database, "v": VERSIONS_TABLE},
    ).rows
    statements = []
    for row in rows:
        [shown] = store.query(f"SHOW CREATE TABLE {database}.`{row['name']}`", {}).rows
        text = shown["statement"]
        assert text.count(f"{database}.") == text.count(database), text  # only as a prefix
        statements.append(text.replace(f"{database}.", f"{DB_PLACEHOLDER}."))
    return statements


def _if_not_exists(statement: str) -> str:
    for kind in ("CREATE TABLE ", "CREATE MATERIALIZED VIEW "):
        if statement.startswith(kind):
            return f"{kind}IF NOT EXISTS {statement[len(kind) :]}"
    raise AssertionError(f"not a table or view: {statement[:80]}")


def _versions(store: ChdbEventStore, database: str) -> list[int]:
    """The files' versions recorded, without the fresh schema's mark (``BEGUN``)."""
    rows = store.query(f"SELECT version FROM {database}.{VERSIONS_TABLE} ORDER BY version", {})
    return [int(r["version"]) for r in rows.rows if int(r["version"]) != BEGUN]


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """(store, database) holding every DDL file applied in turn, as before the schema."""
    shared = ref.shared_chdb_store(tmp_path_factory)
    database = f"replayed_{uuid.uuid4().hex[:8]}"
    store = ChdbEventStore(shared.path, database=database)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FreshSchema, "load", classmethod(lambda cls: None))
        store.start()
    yield store, database
    store.close()


def test_the_fresh_schema_is_what_the_ddl_files_make(replayed: Any) -> None:
    store, database = replayed
    [engine] = store.query("SELECT version() AS v", {}).rows
    made = {
        "engine": engine["v"],
        "version": ddl.ddl_files()[-1][0],
        "statements": [_if_not_exists(s) for s in _objects(store, database)],
    }
    assert _versions(store, database) == [v for v, _ in ddl.ddl_files()]
    # A version's row is synced before the next file's tables are made, as events are.
    [versions] = store.query(f"SHOW CREATE TABLE {database}.{VERSIONS_TABLE}", {}).rows
    assert "fsync_after_insert = 1, fsync_part_directory = 1" in versions["statement"]
    if os.environ.get("UPDATE_GOLDEN") == "1":
        FILE.write_text(json.dumps(made, indent=2, ensure_ascii=True) + "\n")
    assert json.loads(FILE.read_text()) == made, (
        f"{FILE.name} is not what the DDL files make on this engine: rewrite it with "
        "UPDATE_GOLDEN=1 and review the diff"
    )


def test_a_new_database_is_given_the_schema_the_files_make(
    replayed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, database = replayed
    fits: list[bool] = []
    checked = FreshSchema.fits
    monkeypatch.setattr(
        FreshSchema, "fits", lambda self, *a: fits.append(checked(self, *a)) or fits[-1]
    )
    fresh_database = f"fresh_{uuid.uuid4().hex[:8]}"
    fresh = ChdbEventStore(store.path, database=fresh_database)
    fresh.start()
    try:
        assert fits == [True]
        assert _objects(fresh, fresh_database) == _objects(store, database)
        assert _versions(fresh, fresh_database) == _versions(store, database)
        # Started again, it is a database like any other: nothing is applied twice.
        fresh.close()
        fresh.start()
        assert fits == [True]
        assert _versions(fresh, fresh_database) == _versions(store, database)
    finally:
        fresh.close()


# Another release's events table, made by a start that stopped before the rest.
OLDER_EVENTS = "CREATE TABLE IF NOT EXISTS {db}.events (x UInt8) ENGINE = MergeTree ORDER BY x"


@pytest.mark.parametrize(
    "made",
    [(), (0,), (0, 1), (OLDER_EVENTS,)],
    ids=["no table", "the first table", "both tables", "another release's table"],
)
def test_a_start_stopped_inside_the_fresh_schema_is_made_again_to_the_same_end(
    replayed: Any, made: tuple[int | str, ...]
) -> None:
    """A first start killed after some of the schema's statements, before the files'
    versions: the next start finds the mark alone and makes the database again (the files
    cannot be replayed over part of the schema, since the view of 0005 fails over the
    paths table of 0007, and a table another release made is not this one's)."""
    store, database = replayed
    cut = f"cut_{uuid.uuid4().hex[:8]}"
    partial = ChdbEventStore(store.path, database=cut)
    schema = FreshSchema.load()
    statements = [schema.statements[m] if isinstance(m, int) else m for m in made]
    killed = (*statements, "SELECT throwIf(1, 'killed')")
    with pytest.MonkeyPatch.context() as patch:
        short = FreshSchema(schema.engine, schema.version, killed)
        patch.setattr(FreshSchema, "load", classmethod(lambda cls: short))
        with pytest.raises(StoreError, match="killed"):
            partial.start()
    partial.close()
    left = store.query(
        "SELECT name FROM system.tables WHERE database = {d:String} AND name != {v:String}",
        {"d": cut, "v": VERSIONS_TABLE},
    ).rows
    assert len(left) == len(made)
    partial.start()
    try:
        assert _objects(partial, cut) == _objects(store, database)
        assert _versions(partial, cut) == _versions(store, database)
    finally:
        partial.close()


def test_a_database_holding_events_is_never_made_again(replayed: Any) -> None:
    """The mark alone, with events (its versions' rows lost, say): the start refuses,
    and the events stay."""
    store, _ = replayed
    held = f"held_{uuid.uuid4().hex[:8]}"
    events = ChdbEventStore(store.path, database=held)
    events.start()
    ref.store_events(events, Tenant("ws", "env"), "ds", [{"message": "kept"}])
    events.command(f"DELETE FROM {held}.{VERSIONS_TABLE} WHERE version != {BEGUN}")
    events.close()
    with pytest.raises(StoreError, match="holds events but records no DDL version"):
        events.start()
    events.close()
    [left] = store.query(f"SELECT count() AS n FROM {held}.events", {}).rows
    assert int(left["n"]) == 1
