"""``limelight restore`` refuses what it cannot restore whole, before writing anything,
leaves the data directory as it was when it fails, and writes nothing another local
user can read; ``serve`` and the admin commands keep the data directory private too."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from limelight.auth.sessions import signing_key
from limelight.settings import Settings
from tests.support import launch, migrated_sqlite, run_cli

LOCK_FILE = "serve.lock"  # left (empty) by every command that held the data directory


def environment(data_dir: Path) -> dict[str, str]:
    return {**os.environ, "LIMELIGHT_DATA_DIR": str(data_dir)}


def restore(data_dir: Path, backup: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(["restore", str(backup)], environment(data_dir))


@pytest.fixture(scope="module")
def backup(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A backup of an installation with metadata and a secret key of its own."""
    root = tmp_path_factory.mktemp("made")
    migrated_sqlite(root / "data" / "meta.db").dispose()
    signing_key(Settings(data_dir=root / "data"))
    made = run_cli(["backup", str(root / "backup")], environment(root / "data"))
    assert made.returncode == 0, made.stderr
    return root / "backup"


def copy_of(backup: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(backup, tmp_path / "backup", symlinks=True))


def contents(data_dir: Path) -> set[str]:
    """What is in ``data_dir`` besides the lock file, symbolic links included."""
    return {str(p.relative_to(data_dir)) for p in data_dir.rglob("*")} - {LOCK_FILE}


def refused(out: subprocess.CompletedProcess[str], code: int, *said: str) -> None:
    assert out.returncode == code, out.stderr
    assert "Traceback" not in out.stderr
    [error] = [line for line in out.stderr.splitlines() if line.startswith("error: ")]
    for words in said:
        assert words in error


def test_a_restore_failing_at_the_events_leaves_the_data_directory_as_it_was(
    backup: Path, tmp_path: Path
) -> None:
    broken = copy_of(backup, tmp_path)
    # The engine's description of the backup stays (one without it is refused up front):
    # the files it lists are gone, which only the engine's RESTORE finds out.
    for part in (broken / "events").iterdir():
        if part.is_dir():
            shutil.rmtree(part)
    data = tmp_path / "data"
    data.mkdir()
    refused(restore(data, broken), 3, "the events store cannot be used")
    assert contents(data) == set()
    # A data directory the restore made is removed again.
    refused(restore(tmp_path / "new", broken), 3)
    assert not (tmp_path / "new").exists()

    done = restore(data, backup)
    assert done.returncode == 0, done.stderr
    assert {"meta.db", "secret.key", "chdb"} <= contents(data)


def test_a_data_directory_holding_a_secret_key_is_refused_and_its_key_kept(
    backup: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    own = signing_key(Settings(data_dir=data))
    assert own != (backup / "secret.key").read_bytes().strip()
    refused(restore(data, backup), 1, "already holds a secret key (secret.key)")
    assert (data / "secret.key").read_bytes().strip() == own
    assert contents(data) == {"secret.key"}


def test_restored_files_are_the_owners_alone_whatever_the_modes_in_the_backup(
    backup: Path, tmp_path: Path
) -> None:
    loose = copy_of(backup, tmp_path)
    for name in ("meta.db", "secret.key"):
        (loose / name).chmod(0o644)
    data = tmp_path / "data"
    done = restore(data, loose)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE((data / "secret.key").stat().st_mode) == 0o600
    assert readable_by_others(data) == []


def readable_by_others(data_dir: Path) -> list[str]:
    """What in ``data_dir`` (itself included) its group or others may use, links aside."""
    return [
        f"{path}: {stat.S_IMODE(path.lstat().st_mode):o}"
        for path in [data_dir, *data_dir.rglob("*")]
        if not path.is_symlink() and path.lstat().st_mode & 0o077
    ]


def not_sqlite(backup: Path) -> None:
    (backup / "meta.db").write_bytes(os.urandom(4096))


def no_metadata(backup: Path) -> None:
    (backup / "meta.db").unlink()


def no_events(backup: Path) -> None:
    """The ``events/`` folder left, empty: the engine's RESTORE answered BACKUP_NOT_FOUND
    (exit 3) once the metadata was restored and migrated."""
    for part in (backup / "events").iterdir():
        shutil.rmtree(part) if part.is_dir() else part.unlink()


def from_a_newer_limelight(backup: Path) -> None:
    """A schema version this code has no migration for: Alembic's traceback, exit 70."""
    with closing(sqlite3.connect(backup / "meta.db")) as db, db:
        db.execute("UPDATE alembic_version SET version_num = '9999_future'")


def linked(name: str, to: str | None = None) -> Callable[[Path], None]:
    """The backup's ``name`` made a symbolic link: to ``to``, else to the part itself moved
    out of the backup (whole, only elsewhere)."""

    def link(backup: Path) -> None:
        target = Path(to) if to else backup.parent / "outside" / name
        if to:
            (backup / name).unlink()
        else:
            target.parent.mkdir()
            (backup / name).rename(target)
        (backup / name).symlink_to(target)

    return link


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (not_sqlite, "meta.db is not the metadata of a Limelight installation"),
        (no_metadata, "it holds no meta.db"),
        (no_events, "is not a whole Limelight backup: it holds no events/.backup"),
        (
            from_a_newer_limelight,
            "the backup was made by a newer Limelight (schema 9999_future); "
            "restore it with that version",
        ),
        (linked("meta.db", "/etc/passwd"), "holds symbolic links (meta.db)"),
        (linked("secret.key"), "holds symbolic links (secret.key)"),
        (linked("events"), "holds symbolic links (events)"),
    ],
    ids=[
        "not-sqlite",
        "no-meta-db",
        "no-events",
        "newer-schema",
        "meta-db-linked",
        "key-linked",
        "events-linked",
    ],
)
def test_a_backup_not_as_limelight_backup_writes_it_is_refused_before_anything_is_written(
    backup: Path, tmp_path: Path, damage: Callable[[Path], None], said: str
) -> None:
    damaged = copy_of(backup, tmp_path)
    damage(damaged)
    data = tmp_path / "data"
    data.mkdir()
    refused(restore(data, damaged), 1, said)
    assert contents(data) == set()


@pytest.mark.parametrize("name", ["meta.db", "chdb", "secret.key"])
def test_a_symbolic_link_in_the_data_directory_is_refused(
    backup: Path, tmp_path: Path, name: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    data = tmp_path / "data"
    data.mkdir()
    (data / name).symlink_to(outside / name)  # to nothing yet
    refused(restore(data, backup), 1, f"{data / name} is a symbolic link")
    assert list(outside.iterdir()) == []
    assert contents(data) == {name}


def test_serve_keeps_the_data_directory_its_owners_alone(tmp_path: Path) -> None:
    server = launch(tmp_path / "served")  # the folder made 0755 beforehand, as by hand
    try:
        names = {p.name for p in server.data_dir.iterdir()}
        assert {"meta.db", "secret.key", "chdb"} <= names
        wrong = readable_by_others(server.data_dir)
    finally:
        server.stop()
    # The log is the test's, opened before the server started.
    assert [w for w in wrong if not w.startswith(str(server.log_path))] == []


def test_an_admin_command_makes_a_data_directory_its_owners_alone(tmp_path: Path) -> None:
    data = tmp_path / "data"
    out = run_cli(["migrate"], environment(data))
    assert out.returncode == 0, out.stderr
    # The folder closes everything in it; the database is the owner's alone besides.
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert stat.S_IMODE((data / "meta.db").stat().st_mode) == 0o600
