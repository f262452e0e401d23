"""An events store whose statements wait until the test lets them through: the query run
workers stay busy for as long as a test needs, whatever the machine's speed, and the
order statements reach the engine is recorded."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any


class HeldStore:
    """The engine, each statement held until the test lets it through (``release`` a
    number of them, or ``open`` for all); records the statements in the order they
    arrive, each named by the first of its parameters found in ``runs`` (a run's
    timeframe start, say), else "?"."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.table, self.paths_table = store.table, store.paths_table
        self.runs: dict[int, str] = {}
        self.arrived: list[str] = []
        self._changed = threading.Condition()
        self._passes = 0
        self._open = False

    def query(self, sql: str, params: Mapping[str, Any], *rest: Any) -> Any:
        named = [self.runs[v] for v in params.values() if isinstance(v, int) and v in self.runs]
        with self._changed:
            self.arrived.append(named[0] if named else "?")
            self._changed.notify_all()
            let_through = self._changed.wait_for(lambda: self._open or self._passes > 0, 60)
            assert let_through, "the test never let the statement through"
            if not self._open:
                self._passes -= 1
        return self.store.query(sql, params, *rest)

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
