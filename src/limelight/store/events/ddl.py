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

from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

VERSIONS_TABLE = "schema_versions"
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
            "{db}": self.database,
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
            "ORDER BY version",
        ]


def apply_ddl(target: DdlTarget, run: Callable[[str], str]) -> None:
    """Apply the files newer than the recorded version; ``run`` executes one statement."""
    for statement in target.preamble():
        run(statement)
    db = target.database
    current = run(f"SELECT max(version) FROM {db}.{VERSIONS_TABLE}").strip()
    applied = int(current or 0)
    for version, text in ddl_files():
        if version <= applied:
            continue
        for statement in target.render(text):
            run(statement)
        run(f"INSERT INTO {db}.{VERSIONS_TABLE} (version) VALUES ({version:d})")
