"""The scale-out transport: a ClickHouse server or cluster over HTTP (clickhouse-connect).

Same DDL, same SQL and the same row encoding as the embedded engine; only the
transport differs. Any number of stateless API workers can share one server.

One client serves every thread of the process. clickhouse-connect sends a
session id with every request by default, and a server runs one request of a
session at a time ("session is locked by a concurrent client"), so the client
is made without one: our statements rely on no session state (their settings
are in their own SETTINGS clause), and each request stands alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from limelight.errors import StoreError
from limelight.store.events.base import (
    INSERT_COLUMNS,
    INSERT_SETTINGS,
    RESULT_FORMAT,
    EventRow,
    QueryResult,
    TablesOf,
    decode_result,
    encode_rows,
    engine_error,
)
from limelight.store.events.ddl import DdlTarget, apply_ddl
from limelight.tenant import Tenant


class ServerEventStore(TablesOf):
    def __init__(
        self,
        url: str,
        database: str = "limelight",
        cluster: str | None = None,
        regex_dictionaries: bool = False,
    ) -> None:
        self._url = url
        self._database = database
        self._cluster = cluster
        self._regex_dictionaries = regex_dictionaries
        self._target = DdlTarget(database, cluster)
        # On a cluster an insert goes to the Distributed table: acknowledged only once
        # the shards have written it, as on one server.
        self._insert_settings: dict[str, int] = {
            "async_insert": 1,
            "wait_for_async_insert": 1,
            **INSERT_SETTINGS,
            **({"distributed_foreground_insert": 1} if cluster else {}),
        }
        self._client: Any = None

    def start(self) -> None:
        import clickhouse_connect

        try:
            self._client = clickhouse_connect.get_client(
                dsn=self._url, database="default", autogenerate_session_id=False
            )
        except Exception as exc:
            raise StoreError(f"cannot reach ClickHouse at the configured URL: {exc}") from exc
        apply_ddl(self._target, self._text)

    def _text(self, sql: str) -> str:
        """A statement's answer as text (the DDL's version query reads a number)."""
        try:
            answer = self._client.command(sql)
        except Exception as exc:
            raise engine_error(exc) from exc
        return "" if answer is None or not isinstance(answer, str | int) else str(answer)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def insert(self, tenant: Tenant, rows: Sequence[EventRow]) -> None:
        if not rows:
            return
        body = encode_rows(tenant, rows)
        try:
            self._client.raw_insert(
                self.table,
                column_names=list(INSERT_COLUMNS),
                insert_block=body,
                fmt="TabSeparated",
                # Server-side batching of many small requests; wait so that an
                # acknowledged request is on disk.
                settings=self._insert_settings,
            )
        except Exception as exc:
            raise engine_error(exc) from exc

    def query(
        self, sql: str, params: Mapping[str, Any], columns: Sequence[str] | None = None
    ) -> QueryResult:
        try:
            result = self._client.raw_query(sql, parameters=dict(params), fmt=RESULT_FORMAT)
        except Exception as exc:
            raise engine_error(exc) from exc
        return decode_result(result, columns)

    def disk_bytes(self) -> int:
        """The parts of the database's tables (active or waiting to be removed), on every
        replica of a cluster: system.parts knows only its own node's."""
        parts = "system.parts"
        if self._cluster:  # a name the settings hold to an identifier's letters
            parts = f"clusterAllReplicas({self._cluster}, system.parts)"
        sql = (
            f"SELECT toString(sum(bytes_on_disk)) AS bytes FROM {parts}"
            " WHERE database = {database:String}"
        )
        rows = self.query(sql, {"database": self._database}, ["bytes"]).rows
        return int(rows[0]["bytes"])

    def command(self, sql: str, params: Mapping[str, Any] | None = None) -> None:
        try:
            if params:
                # As a query: clickhouse-connect then moves bound values that would make
                # the URL too long into a form body (a command keeps them in the URL).
                self._client.raw_query(sql, parameters=dict(params))
            else:
                self._client.command(sql)
        except Exception as exc:
            raise engine_error(exc) from exc
