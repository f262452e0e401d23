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

A restore is made in a new folder inside the data directory and moved into place once
whole, so one that fails leaves the data directory as it was. It takes only a fresh
data directory and a backup as ``make_backup`` writes it: no part of the one replaced,
no symbolic link followed out of either, every file it writes 0600.

The server mode has its own tools: ClickHouse's BACKUP and pg_dump (README).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from contextlib import closing
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from alembic.script import ScriptDirectory

from limelight.auth.alert_secrets import reseal_all
from limelight.auth.sealing import Sealer
from limelight.auth.sessions import KEY_FILE
from limelight.errors import Conflict, NotFound
from limelight.settings import Settings
from limelight.store.events.base import EventStore
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.store.events.unscoped import unscoped
from limelight.store.meta.db import MIGRATIONS, MetaDB

MANIFEST = "manifest.json"
FORMAT = 1
META_FILE = "meta.db"
EVENTS_DIR = "events"
# What ClickHouse's BACKUP writes first in its folder: without it the engine's RESTORE
# fails (BACKUP_NOT_FOUND) after the metadata was restored and migrated.
EVENTS_DESCRIPTION = ".backup"


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


# What restore writes into the data directory (SQLite's journals of meta.db besides):
# a data directory holding any of them is not fresh.
ENGINE_DIR = "chdb"
META_JOURNALS = (f"{META_FILE}-wal", f"{META_FILE}-shm")
RESTORED = (META_FILE, *META_JOURNALS, ENGINE_DIR, KEY_FILE)


def restore_backup(settings: Settings, source: Path) -> dict[str, Any]:
    """Make the data directory of ``settings`` (fresh: none of ``RESTORED`` in it) from a
    backup; the metadata and events migrations newer than the backup are applied.

    Everything is restored into a new folder inside the data directory (the same
    filesystem) and moved into place only once whole: a restore that fails leaves the
    data directory as it was, and restore can be run again."""
    manifest = read_manifest(source)
    if manifest.get("database") != settings.clickhouse_database:
        raise Conflict(
            f"the backup holds the events database {manifest.get('database')!r}; set "
            f"LIMELIGHT_CLICKHOUSE_DATABASE={manifest.get('database')} to restore it"
        )
    check_backup(source)
    data_dir = settings.data_dir
    refuse_unfresh(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".restore-", dir=data_dir))  # 0700
    try:
        _restore_into(settings.model_copy(update={"data_dir": stage}), source)
        _move_into(stage, data_dir)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return manifest


def check_backup(source: Path) -> None:
    """Refuse a folder that is not whole as ``make_backup`` writes it, before anything is
    written. It holds no symbolic link: one would have restore copy a file from outside
    the backup (``/etc/passwd`` as ``meta.db``) into the data directory."""
    links = _links_under(source)
    if links:
        raise Conflict(
            f"{source} holds symbolic links ({', '.join(links[:3])}), which no backup made "
            "by limelight backup holds: restore a copy that holds the files themselves"
        )
    for name, whole in (
        (META_FILE, Path.is_file),
        (EVENTS_DIR, Path.is_dir),
        (f"{EVENTS_DIR}/{EVENTS_DESCRIPTION}", Path.is_file),
    ):
        if not whole(source / name):
            raise NotFound(f"{source} is not a whole Limelight backup: it holds no {name}")


def _links_under(root: Path) -> list[str]:
    found = []
    for folder, folders, files in os.walk(root):  # never into a linked folder
        for name in (*folders, *files):
            path = os.path.join(folder, name)
            if os.path.islink(path):
                found.append(os.path.relpath(path, root))
    return found


def refuse_unfresh(data_dir: Path) -> None:
    """Refuse a data directory holding any part restore writes: it is never replaced, so
    a restore cannot take the place of an installation, or of the ``secret.key`` that
    opens the secrets of another installation's ``meta.db``."""
    for name in RESTORED:
        path = data_dir / name
        if os.path.islink(path):
            raise Conflict(
                f"{path} is a symbolic link: restore writes into the data directory itself; "
                "remove it, or restore into a fresh data directory (set LIMELIGHT_DATA_DIR)"
            )
        if os.path.lexists(path):
            held = "a secret key" if name == KEY_FILE else "an installation"
            raise Conflict(
                f"the data directory {data_dir} already holds {held} ({name}); restore into "
                "a fresh one (set LIMELIGHT_DATA_DIR) or move it away first"
            )


def _restore_into(staged: Settings, source: Path) -> None:
    """The metadata, its key and the events, restored into ``staged.data_dir``."""
    stage = staged.data_dir
    _copy_private(source / META_FILE, stage / META_FILE)
    _check_metadata(stage / META_FILE, source)
    if (source / KEY_FILE).is_file():
        _copy_private(source / KEY_FILE, stage / KEY_FILE)
    # Without one, the check of the secrets makes a new key (0600) in the stage.
    _restore_meta(staged)
    events = ChdbEventStore(stage / ENGINE_DIR, staged.clickhouse_database, backups=source)
    try:
        events.restore(source / EVENTS_DIR)
    finally:
        events.close()


def _copy_private(source: Path, target: Path) -> None:
    """The bytes of ``source`` in a new file readable by its owner alone, whatever the mode
    of the backup's copy (``copy2`` copied a 0644 ``secret.key`` as 0644)."""
    reading = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    with open(reading, "rb") as src:
        writing = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with open(writing, "wb") as dst:
            shutil.copyfileobj(src, dst)


def _check_metadata(path: Path, source: Path) -> None:
    """Refuse a ``meta.db`` that is not the metadata of an installation (not SQLite, or
    without the migrations' record), or whose schema is newer than this code's, before
    the migrations meet it: Alembic stops on a revision it does not know with a
    traceback."""
    try:
        with closing(sqlite3.connect(path)) as db:
            versions = [v for (v,) in db.execute("SELECT version_num FROM alembic_version")]
    except sqlite3.DatabaseError as exc:
        raise Conflict(
            f"{source / META_FILE} is not the metadata of a Limelight installation ({exc})"
        ) from None
    known = {script.revision for script in ScriptDirectory(str(MIGRATIONS)).walk_revisions()}
    unknown = [str(v) for v in versions if v not in known]
    if unknown:
        raise Conflict(
            f"the backup was made by a newer Limelight (schema {', '.join(unknown)}); "
            "restore it with that version"
        )


def _move_into(stage: Path, data_dir: Path) -> None:
    """Move the restored parts from ``stage`` into ``data_dir``, the metadata last; if one
    cannot be moved, those moved already are removed. A file is linked, never renamed:
    a link fails on a name taken meanwhile, where a rename would replace its file."""
    placed: list[Path] = []
    try:
        for name in (KEY_FILE, ENGINE_DIR, f"{META_FILE}-wal", META_FILE):
            # Absent: no key (LIMELIGHT_SECRET_KEY), or no journal left by SQLite.
            if os.path.lexists(stage / name):
                _place(stage / name, data_dir / name)
                placed.append(data_dir / name)
    except BaseException:
        for path in placed:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
        raise


def _place(part: Path, target: Path) -> None:
    taken = Conflict(f"{target} was made while restoring; the restore is undone")
    if part.is_dir():
        if os.path.lexists(target):
            raise taken
        part.rename(target)
        return
    try:
        os.link(part, target)
    except FileExistsError:
        raise taken from None


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
