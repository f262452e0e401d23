"""The installation a command acts on: its settings and metadata database, opened once
per command, and said on stderr (so ``--json`` output stays clean)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

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
                settings.data_dir.mkdir(parents=True, exist_ok=True)
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
