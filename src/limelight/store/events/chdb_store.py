"""The embedded transport: ClickHouse's engine in this process (chDB).

chDB allows one engine per process and one process per data directory, so the
embedded mode runs one server worker. Queries from several threads are fine:
chDB releases the GIL while a query runs. A chDB session runs one statement at
a time, though, so the store keeps a small pool of sessions on the same engine:
measured on 2 cores, two concurrent inserts of 1,000 events through two
sessions take the time of one (1.7x the throughput of a single session).
Sessions are interchangeable: no code may rely on per-session state (SET).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from limelight.errors import StoreError
from limelight.store.events.base import (
    INSERT_COLUMNS,
    JSON_PARSE_SETTINGS,
    EventRow,
    QueryResult,
    Tenant,
    decode_json_rows,
    encode_rows,
    settings_clause,
)
from limelight.store.events.ddl import apply_ddl

_COLUMNS = ", ".join(INSERT_COLUMNS)
_INSERT_SETTINGS = settings_clause({"async_insert": 0, **JSON_PARSE_SETTINGS})

# ClickHouse reads a bound parameter's text in its escaped (TabSeparated) form,
# so a backslash, tab or newline in a value must be escaped to arrive intact.
# The server transport (clickhouse-connect) does the same.
_PARAM_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\0": "\\0"})


def bind_values(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v.translate(_PARAM_ESCAPES) if isinstance(v, str) else v for k, v in params.items()}


SESSIONS = 4


class ChdbEventStore:
    def __init__(self, path: Path, database: str = "limelight", sessions: int = SESSIONS) -> None:
        self._path = path
        self._database = database
        self._size = sessions
        self._sessions: list[Any] = []
        self._idle: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()

    @property
    def table(self) -> str:
        return f"{self._database}.events"

    @property
    def paths_table(self) -> str:
        return f"{self._database}.event_paths"

    def start(self) -> None:
        from chdb import session  # imported here: loading the engine takes a moment

        with self._lock:
            if self._sessions:
                return
            self._path.mkdir(parents=True, exist_ok=True)
            try:
                for _ in range(self._size):
                    self._sessions.append(session.Session(str(self._path)))  # type: ignore[no-untyped-call]
            except Exception as exc:
                self._close_sessions()
                raise StoreError(f"cannot open the events engine at {self._path}: {exc}") from exc
            for s in self._sessions:
                self._idle.put(s)
        self.migrate()

    def migrate(self) -> None:
        """Apply the DDL files newer than the recorded version."""
        apply_ddl(self._database, lambda sql: str(self._run(sql, "CSV")))

    def close(self) -> None:
        with self._lock:
            self._close_sessions()

    def _close_sessions(self) -> None:
        while not self._idle.empty():
            self._idle.get_nowait()
        for s in self._sessions:
            s.close()
        self._sessions = []

    @contextmanager
    def _session(self) -> Iterator[Any]:
        if not self._sessions:
            raise StoreError("event store is not started")
        s = self._idle.get()
        try:
            yield s
        finally:
            self._idle.put(s)

    def _run(self, sql: str, fmt: str, params: Mapping[str, Any] | None = None) -> Any:
        with self._session() as s:
            try:
                if params:
                    return s.query(sql, fmt, params=bind_values(params))
                return s.query(sql, fmt)
            except Exception as exc:  # chDB raises its own error types
                raise StoreError(str(exc)) from exc

    def insert(self, tenant: Tenant, rows: Sequence[EventRow]) -> None:
        if not rows:
            return
        # Our batches are already large; a synchronous insert makes one part
        # and returns once it is written, which is the durability we promise.
        sql = f"INSERT INTO {self.table} ({_COLUMNS}) SETTINGS {_INSERT_SETTINGS} FORMAT TSV\n"
        self._run(sql + encode_rows(tenant, rows).decode(), "CSV")

    def query(self, sql: str, params: Mapping[str, Any]) -> QueryResult:
        res = self._run(sql, "JSONEachRow", params)
        return QueryResult(
            rows=decode_json_rows(res.bytes()),
            elapsed=float(res.elapsed()),
            rows_read=int(res.storage_rows_read()),
            bytes_read=int(res.storage_bytes_read()),
        )
