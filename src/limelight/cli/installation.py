"""The installation a command acts on: its settings and metadata database, opened once
per command, and said on stderr (so ``--json`` output stays clean)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from pathlib import Path

from sqlalchemy.orm import Session

from limelight.auth.sealing import Sealer
from limelight.cli.output import note
from limelight.settings import Settings
from limelight.store.meta.db import MetaDB


class Installation:
    def __init__(self) -> None:
        self._settings: Settings | None = None
        self._meta: MetaDB | None = None
        self._announced = False
        # True where the command says which installation it serves in its own words.
        self.quiet = False

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = Settings()
        return self._settings

    def announce(self) -> None:
        """Say once which installation the command acts on."""
        if not self._announced and not self.quiet:
            self._announced = True
            note(f"installation: {self.settings.stores}")

    @property
    def meta(self) -> MetaDB:
        """The metadata database, migrated; opened on first use."""
        if self._meta is None:
            self.announce()
            settings = self.settings
            if not settings.database_url:
                private_dir(settings.data_dir)
                private_file(settings.data_dir / "meta.db")
            meta = MetaDB(settings.resolved_database_url)
            try:
                meta.migrate(sealer=Sealer.of_settings(settings))
            except BaseException:
                meta.dispose()
                raise
            self._meta = meta
        return self._meta

    @contextmanager
    def session(self, immediate: bool = False) -> Iterator[Session]:
        """One metadata transaction: committed when the block ends, rolled back if it raises."""
        with self.meta.session(immediate=immediate) as s:
            yield s

    def close(self) -> None:
        if self._meta is not None:
            self._meta.dispose()
            self._meta = None


def private_dir(path: Path) -> None:
    """Make the data directory, or keep it, readable by its owner alone (0700): it holds
    the password hashes, the secret key and every tenant's events. Only its owner may
    change its mode: another's is left as it is."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    found = path.stat()
    if found.st_mode & 0o077 and found.st_uid == os.geteuid():
        path.chmod(stat.S_IMODE(found.st_mode) & 0o700)


def private_file(path: Path) -> None:
    """Create ``path`` 0600 unless it exists: SQLite creates a database with the mode the
    umask leaves (0644 under the usual 022), and its journals with the database's."""
    with suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def private_from_now(settings: Settings) -> None:
    """For ``serve``, ``backup`` and ``restore``, which run in a process of their own:
    whatever the process makes from now on is its owner's alone (umask 077; chDB creates
    its folders and files with the umask's modes), the data directory included. The
    data directory is not made here: the server mode may need none."""
    os.umask(0o077)
    if settings.data_dir.is_dir():  # else made later, if at all, under the umask: 0700
        private_dir(settings.data_dir)


_current: ContextVar[Installation] = ContextVar("installation")


@contextmanager
def opened() -> Iterator[Installation]:
    """The installation of one command, closed when the command ends."""
    inst = Installation()
    token = _current.set(inst)
    try:
        yield inst
    finally:
        inst.close()
        _current.reset(token)


def installation() -> Installation:
    """The installation of the command being run."""
    try:
        return _current.get()
    except LookupError:
        raise RuntimeError("installation() is for commands run by the limelight group") from None
