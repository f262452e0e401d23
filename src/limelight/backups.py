"""Backups of the embedded mode: the metadata (SQLite) and the events (chDB) of a data
directory, each a consistent snapshot, taken while the server serves.

chDB allows one process per data directory, so while ``limelight serve`` runs only
the serving process can read the events engine: the backup is made there (asked
for by ``limelight backup`` over loopback, see ``api/operator.py``), into a new
directory under ``data_dir/backups`` (the one place the engine may write
backups), and the CLI then moves it where the operator asked. Without a server,
the CLI takes the data directory's lock and makes the backup itself.

A backup directory holds ``meta.db`` (SQLite's online backup API: a consistent
copy while others write), ``events/`` (ClickHouse's BACKUP DATABASE),
``secret.key`` when there is one, and ``manifest.json``. The metadata is copied
first: an event stored between the two copies may be in the backup without being
readable by a tenant made meanwhile, but every tenant and query in the backup is
there with its events up to the moment of the metadata's copy.

A backup is readable by its owner alone: its directory is made 0700 before anything
is written into it, and once complete every folder in it is 0700 and every file
0600 (the engine writes the events' files with its own modes). The secrets of
alert destinations in ``meta.db`` are sealed with the installation's secret key
(``auth.sealing``), which the backup holds as ``secret.key`` unless it is set in
``LIMELIGHT_SECRET_KEY``.

The server mode has its own tools: ClickHouse's BACKUP and pg_dump (README).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from limelight.auth.alert_secrets import reseal_all
from limelight.auth.sealing import Sealer
from limelight.auth.sessions import KEY_FILE
from limelight.errors import Conflict, NotFound
from limelight.settings import Settings
from limelight.store.events.base import EventStore
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.store.events.unscoped import unscoped
from limelight.store.meta.db import MetaDB

MANIFEST = "manifest.json"
FORMAT = 1
META_FILE = "meta.db"
EVENTS_DIR = "events"


def embedded(settings: Settings) -> bool:
    """Whether both stores live in the data directory (what these backups cover)."""
    return settings.events_backend == "chdb" and not settings.database_url


def make_backup(
    settings: Settings, meta: MetaDB, events: EventStore, target: Path
) -> dict[str, Any]:
    """Write a backup into ``target`` (a new directory the engine may write to); the
    embedded engine's alone (``Conflict`` for any other)."""
    if not embedded(settings) or not isinstance(events, ChdbEventStore):
        raise Conflict("backups cover the embedded mode; see the README for the server mode")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.mkdir(mode=0o700)
    target.chmod(0o700)  # mkdir's mode is cut by the umask, never widened: exact here
    _copy_sqlite(meta, target / META_FILE)
    key = settings.data_dir / KEY_FILE
    if key.exists():
        shutil.copy2(key, target / KEY_FILE)
    events.backup(target / EVENTS_DIR)
    # Every tenant's events: the backup is the installation's, not a tenant's.
    count = unscoped(events).query(f"SELECT count() AS n FROM {events.table}", {}).rows[0]["n"]
    manifest = {
        "format": FORMAT,
        "limelight": version("limelight"),
        "createdAt": datetime.now(UTC).isoformat(timespec="seconds"),
        "dataDir": str(settings.data_dir),
        "database": settings.clickhouse_database,
        "events": int(count),
    }
    (target / MANIFEST).write_text(json.dumps(manifest, indent=2))
    owner_only(target)
    return manifest


def owner_only(root: Path) -> None:
    """Every folder under ``root`` (itself included) 0700, every file 0600."""
    root.chmod(0o700)
    for folder, folders, files in os.walk(root):
        for names, mode in ((folders, 0o700), (files, 0o600)):
            for name in names:
                path = os.path.join(folder, name)
                if not os.path.islink(path):  # the engine writes none; never follow one out
                    os.chmod(path, mode)


def _copy_sqlite(meta: MetaDB, target: Path) -> None:
    # Made 0600 before SQLite writes to it: sqlite3 would create it with the umask's mode.
    os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    raw = meta.engine.raw_connection()
    try:
        source = raw.driver_connection
        assert isinstance(source, sqlite3.Connection)
        copy = sqlite3.connect(target)
        try:
            source.backup(copy)
        finally:
            copy.close()
    finally:
        raw.close()


def read_manifest(source: Path) -> dict[str, Any]:
    try:
        manifest: dict[str, Any] = json.loads((source / MANIFEST).read_text())
    except (OSError, ValueError):
        raise NotFound(f"{source} is not a Limelight backup (no readable {MANIFEST})") from None
    if manifest.get("format") != FORMAT:
        raise Conflict(f"{source} is a backup of format {manifest.get('format')}, not {FORMAT}")
    return manifest


def holds_installation(data_dir: Path) -> bool:
    return (data_dir / META_FILE).exists() or (data_dir / "chdb").exists()


def restore_backup(settings: Settings, source: Path) -> dict[str, Any]:
    """Make the data directory of ``settings`` (fresh: no installation in it) from a
    backup; the metadata and events migrations newer than the backup are applied."""
    manifest = read_manifest(source)
    data_dir = settings.data_dir
    if manifest.get("database") != settings.clickhouse_database:
        raise Conflict(
            f"the backup holds the events database {manifest.get('database')!r}; set "
            f"LIMELIGHT_CLICKHOUSE_DATABASE={manifest.get('database')} to restore it"
        )
    if holds_installation(data_dir):
        raise Conflict(
            f"the data directory {data_dir} already holds an installation; restore into a "
            "fresh one (set LIMELIGHT_DATA_DIR) or move it away first"
        )
    data_dir.mkdir(parents=True, exist_ok=True)
    # What this restore adds besides the events: removed if the metadata is refused, so
    # the data directory stays fresh and restore can be run again.
    made = [data_dir / META_FILE]
    if not (data_dir / KEY_FILE).exists():
        made.append(data_dir / KEY_FILE)  # copied, or made by the check of the secrets
    shutil.copy2(source / META_FILE, data_dir / META_FILE)
    if (source / KEY_FILE).exists():
        shutil.copy2(source / KEY_FILE, data_dir / KEY_FILE)
    try:
        _restore_meta(settings)
    except BaseException:
        for path in made:
            for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):
                path.with_name(name).unlink(missing_ok=True)
        raise
    events = ChdbEventStore(data_dir / "chdb", settings.clickhouse_database, backups=source)
    try:
        events.restore(source / EVENTS_DIR)
    finally:
        events.close()
    return manifest


def _restore_meta(settings: Settings) -> None:
    """Migrate the restored metadata, and refuse it when its alert secrets are sealed
    with a key this installation lacks (they would fail at every check and test)."""
    meta = MetaDB(settings.resolved_database_url)
    sealer = Sealer.of_settings(settings)
    try:
        meta.migrate(sealer=sealer)
        unreadable = reseal_all(meta, sealer).unreadable
    finally:
        meta.dispose()
    if unreadable:
        raise Conflict(
            f"the backup's alert secrets ({len(unreadable)} alerts) are sealed with another "
            "secret key: set LIMELIGHT_SECRET_KEY to the key of the installation backed up, "
            "or list it in LIMELIGHT_PREVIOUS_SECRET_KEYS"
        )
