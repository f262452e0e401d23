"""The embedded transport: ClickHouse's engine in this process (chDB).

chDB allows one engine per process and one process per data directory, so the
embedded mode runs one server worker. Queries from several threads are fine:
chDB releases the GIL while a query runs.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from limelight.errors import StoreError
from limelight.store.events.base import (
    INSERT_COLUMNS,
    EventRow,
    QueryResult,
    Tenant,
    decode_json_rows,
    encode_rows,
)
from limelight.store.events.ddl import apply_ddl

_COLUMNS = ", ".join(INSERT_COLUMNS)


class ChdbEventStore:
    def __init__(self, path: Path, database: str = "limelight") -> None:
        self._path = path
        self._database = database
        self._session: Any = None
        self._lock = threading.Lock()

    @property
    def table(self) -> str:
        return f"{self._database}.events"

    def start(self) -> None:
        from chdb import session  # imported here: loading the engine takes a moment

        with self._lock:
            if self._session is not None:
                return
            self._path.mkdir(parents=True, exist_ok=True)
            self._session = session.Session(str(self._path))  # type: ignore[no-untyped-call]
        apply_ddl(self._database, lambda sql: str(self._run(sql, "CSV")))

    def close(self) -> None:
        with self._lock:
            if self._session is not None:
                self._session.close()
                self._session = None

    def _run(self, sql: str, fmt: str, params: Mapping[str, Any] | None = None) -> Any:
        if self._session is None:
            raise StoreError("event store is not started")
        try:
            if params:
                return self._session.query(sql, fmt, params=dict(params))
            return self._session.query(sql, fmt)
        except Exception as exc:  # chDB raises its own error types
            raise StoreError(str(exc)) from exc

    def insert(self, tenant: Tenant, rows: Sequence[EventRow]) -> None:
        if not rows:
            return
        # Our batches are already large; a synchronous insert makes one part
        # and returns once it is written, which is the durability we promise.
        sql = f"INSERT INTO {self.table} ({_COLUMNS}) SETTINGS async_insert=0 FORMAT TabSeparated\n"
        self._run(sql + encode_rows(tenant, rows).decode(), "CSV")

    def query(self, sql: str, params: Mapping[str, Any]) -> QueryResult:
        res = self._run(sql, "JSONEachRow", params)
        return QueryResult(
            rows=decode_json_rows(res.bytes()),
            elapsed=float(res.elapsed()),
            rows_read=int(res.rows_read()),
            bytes_read=int(res.bytes_read()),
        )
