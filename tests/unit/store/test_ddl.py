"""The events DDL, rendered for one server and for a cluster (golden files: no cluster
runs here, so what a cluster would be sent is pinned and checked by rule)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from limelight.errors import StoreError
from limelight.store.events import ddl
from limelight.store.events.ddl import DdlTarget, FreshSchema, apply_ddl, ddl_files

GOLDEN = Path(__file__).parent / "golden"


def _render(target: DdlTarget) -> str:
    parts = target.preamble()
    for version, text in ddl_files():
        parts += [f"-- {version:04d}\n{s}" for s in target.render(text)]
    return ";\n\n".join(parts) + ";\n"


def _check(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(actual)
    assert actual == path.read_text(), f"DDL differs from golden/{name} (UPDATE_GOLDEN=1)"


def test_one_server_gets_each_file_as_it_was_always_applied() -> None:
    rendered = []
    for version, text in ddl_files():
        for statement in DdlTarget("limelight").render(text):
            rendered.append(f"-- {version:04d}\n{statement.rstrip()};\n")
    # Captured before the files gained their cluster placeholders.
    assert "\n".join(rendered) == (GOLDEN / "ddl_single.sql").read_text()


def test_a_cluster_gets_replicated_tables_with_distributed_ones_over_them() -> None:
    rendered = _render(DdlTarget("limelight", "prod"))
    _check("ddl_cluster.sql", rendered)
    statements = [s for s in rendered.split(";\n\n") if s.strip()]
    for statement in statements:
        sql = "\n".join(line for line in statement.splitlines() if not line.startswith("--"))
        if re.match(r"\s*(CREATE|ALTER|DROP)\b", sql):
            assert " ON CLUSTER prod" in sql, sql
        if "MergeTree" in sql:
            assert "ReplicatedMergeTree" in sql or "ReplicatedReplacingMergeTree" in sql, sql
    # Queries read `events` and `event_paths`: on a cluster those are Distributed.
    expected = (
        "CREATE TABLE IF NOT EXISTS limelight.events ON CLUSTER prod AS limelight.events_local\n"
        "ENGINE = Distributed(prod, limelight, events_local, rand())"
    )
    assert expected in rendered
    assert "ENGINE = Distributed(prod, limelight, event_paths_local, rand())" in rendered
    # The view that records paths fires on the shards' own inserts.
    assert "TO limelight.event_paths_local AS" in rendered
    assert "FROM limelight.events_local\n" in rendered


def test_a_column_the_reads_select_is_added_to_the_distributed_table_too() -> None:
    """The span columns (0020) are the shards'; the Distributed table that queries read
    needs them by name, with the same expression."""
    (text,) = [text for version, text in ddl_files() if version == 20]
    single = DdlTarget("limelight").render(text)
    cluster = DdlTarget("limelight", "prod").render(text)
    added = [s for s in cluster if "ADD COLUMN IF NOT EXISTS trace_hash" in s]
    assert [s.split("\n")[-7] for s in added] == [
        "ALTER TABLE limelight.events_local ON CLUSTER prod",
        "ALTER TABLE limelight.events ON CLUSTER prod",
    ]
    assert added[0].split("\n")[-6:] == added[1].split("\n")[-6:]
    assert len(cluster) == len(single) + 1


FRESH = FreshSchema("26.9.2.1", 27, ("CREATE TABLE IF NOT EXISTS {db}.events (x UInt8)",))


class FakeEngine:
    """Answers the questions apply_ddl asks, and keeps every statement it is sent."""

    def __init__(
        self, version: str = "26.9.2.1", tables: int = 0, applied: int = 0, begun: int = 0
    ) -> None:
        self.answers = {
            "SELECT max(version)": f"{applied}\n",
            "SELECT count() FROM db_one.schema_versions WHERE version = 0": f"{begun}\n",
            "SELECT version() = '26.9.2.1'": f"{int(version == '26.9.2.1')}\n",
            "SELECT count() FROM system.tables": f"{tables}\n",
            "SELECT sum(ifNull(total_rows, 0))": "0\n",
        }
        self.sent: list[str] = []

    def __call__(self, sql: str) -> str:
        self.sent.append(sql)
        if sql.startswith("DROP DATABASE"):
            self.answers = {**self.answers, **FakeEngine().answers}
        return next((a for q, a in self.answers.items() if sql.startswith(q)), "")

    def changes(self) -> list[str]:
        return [s for s in self.sent if not s.startswith(("CREATE DATABASE", "SELECT"))]


def _apply(engine: FakeEngine, files: list[tuple[int, str]], target: DdlTarget) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ddl, "ddl_files", lambda: files)
        apply_ddl(target, engine, FRESH)


def _adding(versions: list[int]) -> list[tuple[int, str]]:
    return [(v, f"ALTER TABLE {{db}}.events ADD COLUMN c{v} UInt8") for v in versions]


def test_an_empty_database_of_the_engine_that_wrote_the_fresh_schema_is_given_it() -> None:
    engine = FakeEngine()
    _apply(engine, _adding([1, 2, 27, 28]), DdlTarget("db_one"))
    assert engine.changes()[1:] == [
        "INSERT INTO db_one.schema_versions (version) VALUES (0)",  # begun
        "CREATE TABLE IF NOT EXISTS db_one.events (x UInt8)",
        "INSERT INTO db_one.schema_versions (version) VALUES (1), (2), (27)",
        "ALTER TABLE db_one.events ADD COLUMN c28 UInt8",  # a file newer than the schema
        "INSERT INTO db_one.schema_versions (version) VALUES (28)",
    ]


@pytest.mark.parametrize(
    ("engine", "versions", "replayed"),
    [
        (FakeEngine(version="26.8.1.1"), [1, 27], [1, 27]),
        (FakeEngine(tables=1), [1, 27], [1, 27]),
        (FakeEngine(applied=1), [1, 27], [27]),
        (FakeEngine(), [1, 2], [1, 2]),
    ],
    ids=["another engine", "a table there", "a file applied", "older files"],
)
def test_the_files_are_replayed_where_the_fresh_schema_does_not_fit(
    engine: FakeEngine, versions: list[int], replayed: list[int]
) -> None:
    _apply(engine, _adding(versions), DdlTarget("db_one"))
    assert [s for s in engine.changes() if s.startswith(("CREATE", "ALTER"))][1:] == [
        f"ALTER TABLE db_one.events ADD COLUMN c{v} UInt8" for v in replayed
    ]


def test_a_database_stopped_while_given_the_fresh_schema_is_made_again() -> None:
    engine = FakeEngine(tables=1, begun=1)
    _apply(engine, _adding([1, 27]), DdlTarget("db_one"))
    assert engine.changes() == [
        engine.changes()[0],  # the versions table
        "DROP DATABASE db_one SYNC",
        engine.changes()[0],
        "INSERT INTO db_one.schema_versions (version) VALUES (0)",
        "CREATE TABLE IF NOT EXISTS db_one.events (x UInt8)",
        "INSERT INTO db_one.schema_versions (version) VALUES (1), (27)",
    ]


def test_a_fresh_schema_whose_statement_would_fail_on_a_table_made_already_is_refused() -> None:
    good = '{"engine": "1", "version": 2, "statements": ["CREATE TABLE IF NOT EXISTS {db}.t"]}'
    assert FreshSchema.parse(good).statements == ("CREATE TABLE IF NOT EXISTS {db}.t",)
    with pytest.raises(ValueError, match="not a CREATE ... IF NOT EXISTS"):
        FreshSchema.parse(good.replace("IF NOT EXISTS ", ""))


def test_a_database_holding_rows_with_the_mark_alone_is_refused_not_dropped() -> None:
    engine = FakeEngine(tables=1, begun=1)
    engine.answers["SELECT sum(ifNull(total_rows, 0))"] = "3\n"
    with pytest.raises(StoreError, match="holds events but records no DDL version"):
        _apply(engine, _adding([1, 27]), DdlTarget("db_one"))
    assert not any(s.startswith("DROP") for s in engine.sent)


def test_a_cluster_replays_the_files() -> None:
    engine = FakeEngine()
    files = [(1, "ALTER TABLE {db}.events{local}{on_cluster} ADD COLUMN c1 UInt8"), (27, "")]
    _apply(engine, files, DdlTarget("db_one", "prod"))
    assert not any("x UInt8" in s for s in engine.sent)
    assert "ALTER TABLE db_one.events_local ON CLUSTER prod ADD COLUMN c1 UInt8" in engine.sent
