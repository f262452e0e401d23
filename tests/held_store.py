"""Events stores for tests that stand between the code and the engine: each passes on
everything but what it changes, typed as the ``EventStore`` the code takes."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from limelight.scoped import ScopedStatement
from limelight.store.events.base import EventRow, EventStore, QueryResult
from limelight.tenant import Tenant


class PassingStore:
    """The engine, every call passed on: a test overrides what it changes."""

    def __init__(self, store: EventStore) -> None:
        self.store = store

    def start(self) -> None:
        self.store.start()

    def close(self) -> None:
        self.store.close()

    def insert(self, tenant: Tenant, rows: Sequence[EventRow]) -> None:
        self.store.insert(tenant, rows)

    def read(self, statement: ScopedStatement) -> QueryResult:
        return self.store.read(statement)

    def engine_version(self) -> str:
        return self.store.engine_version()

    def disk_bytes(self) -> int:
        return self.store.disk_bytes()

    @property
    def table(self) -> str:
        return self.store.table

    @property
    def paths_table(self) -> str:
        return self.store.paths_table

    @property
    def text_dictionaries(self) -> str | None:
        return self.store.text_dictionaries


class HeldStore(PassingStore):
    """The engine, each statement held until the test lets it through (``release`` a
    number of them, or ``open`` for all); records the statements in the order they
    arrive, each named by the first of its parameters found in ``runs`` (a run's
    timeframe start, say), else "?"."""

    def __init__(self, store: EventStore) -> None:
        super().__init__(store)
        self.runs: dict[int, str] = {}
        self.arrived: list[str] = []
        self._changed = threading.Condition()
        self._passes = 0
        self._open = False

    def read(self, statement: ScopedStatement) -> QueryResult:
        values = statement.params.values()
        named = [self.runs[v] for v in values if isinstance(v, int) and v in self.runs]
        with self._changed:
            self.arrived.append(named[0] if named else "?")
            self._changed.notify_all()
            let_through = self._changed.wait_for(lambda: self._open or self._passes > 0, 60)
            assert let_through, "the test never let the statement through"
            if not self._open:
                self._passes -= 1
        return self.store.read(statement)

    def wait_arrived(self, count: int, timeout: float = 20) -> list[str]:
        with self._changed:
            assert self._changed.wait_for(lambda: len(self.arrived) >= count, timeout), (
                f"{len(self.arrived)} statements reached the engine, not {count}"
            )
            return list(self.arrived)

    def release(self, statements: int) -> None:
        with self._changed:
            self._passes += statements
            self._changed.notify_all()

    def open(self) -> None:
        """Let every statement through, now and from now on."""
        with self._changed:
            self._open = True
            self._changed.notify_all()
