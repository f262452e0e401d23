"""The events DDL, rendered for one server and for a cluster (golden files: no cluster
runs here, so what a cluster would be sent is pinned and checked by rule)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from limelight.store.events.ddl import DdlTarget, ddl_files

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
