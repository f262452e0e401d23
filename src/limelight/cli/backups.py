"""``limelight backup DIR`` and ``limelight restore DIR`` (the embedded mode).

While a server holds the data directory only it can read the events engine, so
``backup`` asks it (over loopback, with the secret in ``operator.token``) and
moves the backup it made to DIR; without a server, ``backup`` takes the data
directory's lock and makes it itself. ``restore`` needs a fresh data directory
that no server holds.
"""

from __future__ import annotations

import os
import shutil
import time
from contextlib import suppress
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer

from limelight.backups import embedded, make_backup, read_manifest, restore_backup
from limelight.cli.failures import Refused, Unusable
from limelight.cli.installation import installation, private_from_now
from limelight.cli.output import JsonFlag, print_json, say
from limelight.data_lock import LOCK_FILE, DataDirLock, Holder, holder, read_operator_token
from limelight.ids import new_id
from limelight.settings import Settings
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.store.events.factory import backups_dir
from limelight.store.meta.db import MetaDB

SERVER_MODE = (
    "backup and restore cover the embedded mode (SQLite and chDB in the data directory); "
    "in the server mode use ClickHouse's BACKUP and pg_dump (see the README, Backups)"
)
BackupDir = Annotated[Path, typer.Argument(help="The backup's directory.")]


def _ask_server(settings: Settings, server: Holder) -> Path:
    token = read_operator_token(settings.data_dir)
    if token is None or not server.url:
        raise Unusable(f"the server holding {settings.data_dir} cannot be asked for a backup")
    try:
        answer = httpx.post(
            f"{server.url}/operator/backup",
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(10, read=None),
        )
    except httpx.HTTPError as exc:
        raise Unusable(f"the server at {server.url} did not answer: {exc}") from None
    if answer.status_code != 200:
        reason = answer.json().get("reason") if answer.headers.get("content-type") else None
        raise Unusable(f"the server refused the backup ({answer.status_code}): {reason}")
    return Path(answer.json()["path"])


def _backup_here(settings: Settings) -> Path:
    lock = DataDirLock(settings.data_dir)
    lock.acquire("")
    meta = MetaDB(settings.resolved_database_url)
    events = ChdbEventStore(
        settings.data_dir / "chdb", settings.clickhouse_database, backups=backups_dir(settings)
    )
    try:
        events.start()
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        target = backups_dir(settings) / f"{stamp}-{new_id()}"
        make_backup(settings, meta, events, target)
        return target
    finally:
        events.close()
        meta.dispose()
        lock.release()


def _free(target: Path) -> None:
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise Refused(f"{target} exists and is not empty; name a new directory")


def backup(directory: BackupDir, as_json: JsonFlag = False) -> None:
    """Back up the metadata and the events into DIR, consistently, also while serving."""
    inst = installation()
    settings = inst.settings
    if not embedded(settings):
        raise Refused(SERVER_MODE)
    target = directory.absolute()
    _free(target)
    inst.announce()
    private_from_now(settings)
    server = holder(settings.data_dir)
    made = _ask_server(settings, server) if server is not None else _backup_here(settings)
    if target.exists():
        target.rmdir()
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(made, target)
    manifest = read_manifest(target)
    if as_json:
        print_json({"path": str(target), **manifest})
    else:
        say(f"backed up {manifest['events']} events and the metadata to {target}")


def _restore_locked(settings: Settings, source: Path) -> dict[str, Any]:
    """The restore, holding the data directory so that no server starts on it meanwhile.
    A data directory made for it is removed again if it fails (``restore_backup`` leaves
    nothing else in it)."""
    data_dir = settings.data_dir
    made = not os.path.lexists(data_dir)
    private_from_now(settings)
    lock = DataDirLock(data_dir)
    lock.acquire("")
    try:
        return restore_backup(settings, source)
    except BaseException:
        lock.release()
        if made:
            with suppress(OSError):  # something else put in it meanwhile: it stays
                (data_dir / LOCK_FILE).unlink(missing_ok=True)
                data_dir.rmdir()
        raise
    finally:
        lock.release()


def restore(directory: BackupDir, as_json: JsonFlag = False) -> None:
    """Make a fresh data directory (LIMELIGHT_DATA_DIR) from a backup made by backup."""
    inst = installation()
    settings = inst.settings
    if not embedded(settings):
        raise Refused(SERVER_MODE)
    inst.announce()
    manifest = _restore_locked(settings, directory.absolute())
    if as_json:
        print_json({"dataDir": str(settings.data_dir), **manifest})
    else:
        say(f"restored {manifest['events']} events and the metadata into {settings.data_dir}")
