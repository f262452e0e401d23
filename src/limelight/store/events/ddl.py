"""Versioned DDL for the events database, shared by every transport."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

VERSIONS_TABLE = "schema_versions"


def ddl_files() -> list[tuple[int, str]]:
    """(version, sql) for every file in ddl/, in order."""
    folder = resources.files("limelight.store.events") / "ddl"
    out = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            out.append((int(entry.name.split("_", 1)[0]), entry.read_text()))
    return sorted(out)


def apply_ddl(database: str, run: Callable[[str], str]) -> None:
    """Apply the files newer than the recorded version; ``run`` executes one statement."""
    run(f"CREATE DATABASE IF NOT EXISTS {database}")
    run(
        f"CREATE TABLE IF NOT EXISTS {database}.{VERSIONS_TABLE} "
        "(version UInt32, applied_at DateTime DEFAULT now()) ENGINE = MergeTree ORDER BY version"
    )
    current = run(f"SELECT max(version) FROM {database}.{VERSIONS_TABLE}").strip()
    applied = int(current or 0)
    for version, sql in ddl_files():
        if version <= applied:
            continue
        run(sql.replace("{db}", database))
        run(f"INSERT INTO {database}.{VERSIONS_TABLE} (version) VALUES ({version:d})")
