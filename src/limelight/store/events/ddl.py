"""Versioned DDL for the events database, shared by every transport, on one server or a
cluster.

The files in ``ddl/`` apply in order and are recorded in ``schema_versions``.
They hold placeholders, rendered for the target:

- ``{db}``: the database;
- ``{local}``: ``_local`` on a cluster, where the data tables are the shards'
  own (``events_local``) and the names queries read (``events``) are
  Distributed tables over them; nothing on one server;
- ``{on_cluster}``: `` ON CLUSTER <name>`` on a cluster, so every node runs the
  statement; nothing on one server;
- ``{replicated}``: ``Replicated`` on a cluster (ReplicatedMergeTree keeps each
  shard's replicas alike; its path and replica name come from the server's
  defaults and macros); nothing on one server;
- ``{cluster}``: the cluster's name.

A file may hold several statements, each ending with a line of ``;``; a
statement whose first line is ``-- cluster only`` applies on a cluster alone
(the Distributed tables), and one with a line ``-- cluster: the Distributed
table too`` applies on a cluster to the shards' table and then, with
``{local}`` left out, to the Distributed one (a column it must read by name).
On one server the rendering is the statement as it was always applied: an
applied file never changes meaning.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

from limelight.errors import StoreError

VERSIONS_TABLE = "schema_versions"
FRESH_SCHEMA_FILE = "fresh_schema.json"
# What stands for the database in the files and the fresh schema's statements.
DB_PLACEHOLDER = "{db}"
# The version recorded before the fresh schema's statements run: a database holding it
# and no file's version was stopped while it was given the schema.
BEGUN = 0
_SEPARATOR = "\n;\n"
_CLUSTER_ONLY = "-- cluster only"
_DISTRIBUTED_TOO = "-- cluster: the Distributed table too"


def ddl_files() -> list[tuple[int, str]]:
    """(version, text) for every file in ddl/, in order."""
    folder = resources.files("limelight.store.events") / "ddl"
    out = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            out.append((int(entry.name.split("_", 1)[0]), entry.read_text()))
    return sorted(out)


@dataclass(frozen=True)
class DdlTarget:
    database: str
    cluster: str | None = None  # a ClickHouse cluster's name (LIMELIGHT_CLICKHOUSE_CLUSTER)

    def render(self, text: str) -> list[str]:
        """The statements of one file for this target."""
        on = self.cluster is not None
        values = {
            DB_PLACEHOLDER: self.database,
            "{local}": "_local" if on else "",
            "{on_cluster}": f" ON CLUSTER {self.cluster}" if on else "",
            "{replicated}": "Replicated" if on else "",
            "{cluster}": self.cluster or "",
        }
        statements = []
        for part in text.split(_SEPARATOR):
            if not part.strip() or (not on and part.lstrip().startswith(_CLUSTER_ONLY)):
                continue
            tables = [values]
            if on and f"\n{_DISTRIBUTED_TOO}\n" in f"\n{part}":
                tables.append({**values, "{local}": ""})
            for each in tables:
                rendered = part
                for name, value in each.items():
                    rendered = rendered.replace(name, value)
                statements.append(rendered.strip("\n"))
        return statements

    def preamble(self) -> list[str]:
        """The database and the versions table, before any file."""
        on = f" ON CLUSTER {self.cluster}" if self.cluster else ""
        # On a cluster the versions are one table for every node (one replication path
        # whatever the shard), so any node knows what was applied.
        engine = (
            f"ReplicatedMergeTree('/clickhouse/limelight/{self.database}/{VERSIONS_TABLE}',"
            " '{replica}')"
            if self.cluster
            else "MergeTree"
        )
        return [
            f"CREATE DATABASE IF NOT EXISTS {self.database}{on}",
            f"CREATE TABLE IF NOT EXISTS {self.database}.{VERSIONS_TABLE}{on} "
            f"(version UInt32, applied_at DateTime DEFAULT now()) ENGINE = {engine} "
            # Synced as the events are (DDL 0002): a version whose tables outlived a crash
            # while its row did not would have the files replayed over them, and the fresh
            # schema's mark (BEGUN) must be on disk before the tables it stands for.
            "ORDER BY version SETTINGS fsync_after_insert = 1, fsync_part_directory = 1",
        ]


@dataclass(frozen=True)
class FreshSchema:
    """What the files up to ``version`` leave in an empty database, as the engine that ran
    them writes it back (``SHOW CREATE``, ``{db}`` for the database): a new database is
    given it in a few statements rather than by every file in turn. The 26 files were 84
    statements and 1.4 to 1.7 s of CPU (most of it the engine's, about 70 ms for each
    index or projection added, then dropped or replaced by a later file), paid by an
    installation's first start and by 90 new databases in a run of the test suite.

    On an empty table the files' data steps (backfills, MATERIALIZE) do nothing, so the
    end is the same. Only the engine version that wrote it runs it, since another may
    write or read a definition otherwise, and only where one process migrates the
    database (the embedded engine, whose directory one process holds): two processes
    that found a database empty at once could otherwise each take half of the other's
    work as done. ``tests/integration/test_fresh_schema_chdb.py`` checks that it is what
    the files make, and rewrites it with UPDATE_GOLDEN=1."""

    engine: str
    version: int
    statements: tuple[str, ...]

    @classmethod
    def load(cls) -> FreshSchema:
        return cls.parse(
            (resources.files("limelight.store.events") / FRESH_SCHEMA_FILE).read_text()
        )

    @classmethod
    def parse(cls, text: str) -> FreshSchema:
        data = json.loads(text)
        statements = tuple(data["statements"])
        for statement in statements:
            # Each makes its object unless there (a start may find another at it first).
            if not statement.startswith(
                ("CREATE TABLE IF NOT EXISTS ", "CREATE MATERIALIZED VIEW IF NOT EXISTS ")
            ):
                raise ValueError(
                    f"{FRESH_SCHEMA_FILE}: not a CREATE ... IF NOT EXISTS: {statement[:60]}"
                )
        return cls(data["engine"], int(data["version"]), statements)

    def fits(self, target: DdlTarget, run: Callable[[str], str], versions: list[int]) -> bool:
        """Whether an empty database (no file's version recorded) is given this schema:
        on one server, where the files reach its version (a shorter list builds a
        database at an older version), on the engine that wrote it, into a database
        holding no table yet."""
        if target.cluster is not None or self.version not in versions:
            return False
        if _count(run, f"SELECT version() = {string_literal(self.engine)}") != 1:
            return False
        return _count(run, _over_tables(target.database, "count()")) == 0


def _over_tables(database: str, what: str) -> str:
    """``what`` over the tables and views of ``database`` but the versions table."""
    return (
        f"SELECT {what} FROM system.tables WHERE database = {string_literal(database)}"
        f" AND name != {string_literal(VERSIONS_TABLE)}"
    )


def _count(run: Callable[[str], str], sql: str) -> int:
    """The one number a statement answers (-1 for none: never taken as 0 or 1)."""
    return int(run(sql).strip() or -1)


def string_literal(text: str) -> str:
    """A ClickHouse string literal, for the statements that take no bound parameters (DDL,
    BACKUP and RESTORE)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def apply_ddl(
    target: DdlTarget, run: Callable[[str], str], fresh: FreshSchema | None = None
) -> None:
    """Apply the files newer than the recorded version; ``run`` executes one statement.
    An empty database is given ``fresh`` where it fits, then any file newer than it."""
    for statement in target.preamble():
        run(statement)
    db = target.database
    applied = max(_count(run, f"SELECT max(version) FROM {db}.{VERSIONS_TABLE}"), 0)
    files = ddl_files()
    begun = f"SELECT count() FROM {db}.{VERSIONS_TABLE} WHERE version = {BEGUN}"
    if fresh is not None and applied == 0 and _count(run, begun) > 0:
        # BEGUN alone: a start that was giving it the fresh schema stopped before the end.
        # It holds no event (the write-ahead log is replayed after the DDL), and the files
        # cannot be replayed over a part of the schema (0005's view of four columns over
        # 0007's paths table of five), nor can another release's schema finish it: made
        # again from nothing, unless its tables hold rows after all.
        # A view's total_rows is NULL, and a sum over no table NULL too.
        if _count(run, _over_tables(db, "sum(ifNull(total_rows, 0))")) != 0:
            raise StoreError(
                f"the events database {db} holds events but records no DDL version, only that"
                " a first start began: restore it from a backup, or move it aside to start anew"
            )
        run(f"DROP DATABASE {db} SYNC")
        for statement in target.preamble():
            run(statement)
    if applied == 0 and fresh is not None and fresh.fits(target, run, [v for v, _ in files]):
        # Recorded (and synced) before any table is made: a start that finds tables and
        # no file's version knows how they came.
        run(f"INSERT INTO {db}.{VERSIONS_TABLE} (version) VALUES ({BEGUN})")
        for statement in fresh.statements:
            run(statement.replace(DB_PLACEHOLDER, db))
        made = ", ".join(f"({v:d})" for v, _ in files if v <= fresh.version)
        run(f"INSERT INTO {db}.{VERSIONS_TABLE} (version) VALUES {made}")
        applied = fresh.version
    for version, text in files:
        if version <= applied:
            continue
        for statement in target.render(text):
            run(statement)
        run(f"INSERT INTO {db}.{VERSIONS_TABLE} (version) VALUES ({version:d})")
