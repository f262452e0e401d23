"""The embedded transport: ClickHouse's engine in this process (chDB).

chDB allows one engine per process and one process per data directory, so the
embedded mode runs one server worker. Queries from several threads are fine:
chDB releases the GIL while a query runs. A chDB session runs one statement at
a time, though, so the store keeps pools of sessions on the same engine:
measured on 2 cores, two concurrent inserts of 1,000 events through two
sessions take the time of one (1.7x the throughput of a single session).
Inserts and reads have pools of their own, so a flood of small inserts cannot
take every session from the query runs, nor the reverse.

A session is reused across requests and tenants, so it must carry nothing from
one statement to the next: no code may rely on per-session state (SET), and a
session whose statement raised is closed and replaced, never used again. chDB
keeps the partial output of a statement that fails part way (a result over
its limit, a timeout, a runtime error) and hands it to the next statement on
the same session, which would give one tenant's rows to another.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from limelight.errors import StoreError
from limelight.store.events.base import (
    INSERT_COLUMNS,
    INSERT_SETTINGS,
    MAX_DAYS_PER_INSERT,
    RESULT_FORMAT,
    EventRow,
    QueryResult,
    TablesOf,
    decode_result,
    encode_rows,
    engine_error,
    settings_clause,
)
from limelight.store.events.buffered import DEFAULT_LIMITS, BufferedInserts, BufferLimits
from limelight.store.events.ddl import DdlTarget, FreshSchema, apply_ddl, string_literal
from limelight.store.events.wal import Record
from limelight.tenant import Tenant
from limelight.times import DAY_MS

log = logging.getLogger("limelight.store")

_COLUMNS = ", ".join(INSERT_COLUMNS)
_INSERT_SETTINGS = settings_clause({"async_insert": 0, **INSERT_SETTINGS})
# The write-ahead log's blocks (buffered.py) build the words, phrases and cased indexes
# (DDL 0011, 0015, 0019) as they are written, so a needle they answer over events written
# a moment ago reads their parts through them rather than whole: the blocks are large and
# written after the answer, and the indexes cost about 1.8, 2.5 and 1.6 µs an event
# (README). The ngram index (6 µs), the numbers index (0016, now 0027: its extractAll
# cost 2.9 times the phrases index's time in one INSERT, and 12,000-event blocks went
# from 7,247 to 5,149 events/s with it) and the cased numbers index (0023, now 0027:
# the same extractAll) are left to merges.
_BLOCK_SETTINGS = (
    settings_clause({"async_insert": 0, **INSERT_SETTINGS, "materialize_skip_indexes_on_insert": 1})
    + ", exclude_materialize_skip_indexes_on_insert"
    " = 'raw_ngrams,raw_numbers_keys,raw_cased_numbers_keys'"
)

# ClickHouse reads a bound parameter's text in its escaped (TabSeparated) form,
# so a backslash, tab or newline in a value must be escaped to arrive intact.
# The server transport (clickhouse-connect) does the same.
_PARAM_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\0": "\\0"})


# Inside an array literal a string is quoted, with ClickHouse's escapes.
_QUOTED_ESCAPES = str.maketrans(
    {"\\": "\\\\", "'": "\\'", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\0": "\\0"}
)


def _bound(value: Any) -> Any:
    if isinstance(value, str):
        return value.translate(_PARAM_ESCAPES)
    if isinstance(value, list | tuple) and any(isinstance(v, str) for v in value):
        # An Array(String), as its literal (chDB would write its strings unquoted).
        return "[" + ",".join("'" + str(v).translate(_QUOTED_ESCAPES) + "'" for v in value) + "]"
    return value


def bind_values(params: Mapping[str, Any]) -> dict[str, Any]:
    """Values as the engine reads a parameter's text (clickhouse-connect does the same for
    the server transport): strings escaped, lists of strings as array literals."""
    return {k: _bound(v) for k, v in params.items()}


T = TypeVar("T")

SESSIONS = 4
INSERT_SESSIONS = 2
# A batch this large already makes a good part: it is inserted before it is acknowledged,
# not buffered (buffered.py). Smaller ones go through the write-ahead log.
DIRECT_ROWS = 5_000
DIRECT_BYTES = 2 * 1024 * 1024


class SessionPool:
    """Interchangeable sessions on one engine; a session whose statement raised is replaced.

    Replacing costs about 0.2 ms (a new session on the open engine). The new
    session is opened before the old one is closed, so the engine never sees
    its last session close while the store is in use.
    """

    def __init__(self, path: Path, size: int, options: str = "") -> None:
        self._path = path
        self._options = options
        self._size = size
        self._open = 0
        self._idle: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._all: set[Any] = set()
        self._lock = threading.Lock()

    def _new(self) -> Any:
        from chdb import session  # imported here: loading the engine takes a moment

        return session.Session(f"{self._path}{self._options}")  # type: ignore[no-untyped-call]

    def open(self) -> None:
        with self._lock:
            while self._open < self._size:
                s = self._new()
                self._all.add(s)
                self._open += 1
                self._idle.put(s)

    def close(self) -> None:
        with self._lock:
            while not self._idle.empty():
                self._idle.get_nowait()
            for s in self._all:
                s.close()
            self._all.clear()
            self._open = 0

    @property
    def started(self) -> bool:
        return self._open > 0

    @contextmanager
    def session(self) -> Iterator[Any]:
        """A session for one statement; discarded if anything raises while it is held."""
        if not self._open:
            raise StoreError("event store is not started")
        s = self._idle.get()
        try:
            yield s
        except BaseException:
            self._discard(s)
            raise
        self._idle.put(s)

    def _discard(self, broken: Any) -> None:
        with self._lock:
            if broken not in self._all:
                return  # the pool was closed meanwhile
            self._all.discard(broken)
            try:
                fresh = self._new()
            except Exception:
                # Keep the pool one session short rather than reuse the broken one.
                log.exception("could not replace a failed events session")
                self._open -= 1
                fresh = None
            if fresh is not None:
                self._all.add(fresh)
            try:
                broken.close()
            except Exception:
                log.exception("could not close a failed events session")
            if fresh is not None:
                self._idle.put(fresh)
            elif self._open == 0:
                log.error("no events session is left open")


class ChdbEventStore(TablesOf):
    def __init__(
        self,
        path: Path,
        database: str = "limelight",
        sessions: int = SESSIONS,
        insert_sessions: int = INSERT_SESSIONS,
        backups: Path | None = None,
        wal: Path | None = None,
        buffer_limits: BufferLimits = DEFAULT_LIMITS,
        regex_dictionaries: bool = False,
    ) -> None:
        """``backups``: the one directory BACKUP and RESTORE may use (the engine refuses
        any other; ClickHouse's ``backups.allowed_path``, set when the engine starts).
        ``wal``: the write-ahead log's directory, for small batches (``buffered.py``);
        without it every batch is inserted before ``insert`` returns.
        ``regex_dictionaries``: see ``text_dictionaries``."""
        self._regex_dictionaries = regex_dictionaries
        self._path = path
        self._database = database
        options = f"?backups.allowed_path={backups}" if backups is not None else ""
        self._reads = SessionPool(path, sessions, options)
        self._inserts = SessionPool(path, insert_sessions, options)
        self._lock = threading.Lock()
        self._buffer = BufferedInserts(wal, self, buffer_limits) if wal is not None else None
        self._flush_timeout = buffer_limits.max_lag

    @property
    def path(self) -> Path:
        """The engine's data directory (one per process)."""
        return self._path

    def start(self) -> None:
        self._open()
        self.migrate()
        if self._buffer is not None:
            # After the DDL: what a previous process left in the log goes into today's table.
            self._buffer.start()

    def _open(self) -> None:
        with self._lock:
            if self._reads.started:
                return
            self._path.mkdir(parents=True, exist_ok=True)
            try:
                self._reads.open()
                self._inserts.open()
            except Exception as exc:
                self._close_pools()
                raise StoreError(f"cannot open the events engine at {self._path}: {exc}") from exc

    def backup(self, target: Path) -> None:
        """A consistent copy of the events database in ``target`` (a new directory under
        the ``backups`` directory), made by the engine while it serves: ClickHouse's
        BACKUP reads a snapshot of the parts as they are when it starts; the events
        still in the write-ahead log are written first."""
        if self._buffer is not None:
            self._buffer.flush_all(self._flush_timeout)
        self.command(f"BACKUP DATABASE {self._database} TO File({string_literal(str(target))})")

    def restore(self, source: Path) -> None:
        """Start on an empty data directory from a backup made by ``backup``, then apply
        the DDL newer than the backup's."""
        self._open()
        self.command(f"RESTORE DATABASE {self._database} FROM File({string_literal(str(source))})")
        self.migrate()

    def migrate(self) -> None:
        """Apply the DDL files newer than the recorded version."""
        apply_ddl(
            DdlTarget(self._database),
            lambda sql: self._run(self._reads, sql, "CSV", _text),
            FreshSchema.load(),
        )

    def close(self) -> None:
        if self._buffer is not None:
            self._buffer.close()
        with self._lock:
            self._close_pools()

    def _close_pools(self) -> None:
        self._inserts.close()
        self._reads.close()

    def _run(
        self,
        pool: SessionPool,
        sql: str | bytes,
        fmt: str,
        read: Callable[[bytes], T],
        params: Mapping[str, Any] | None = None,
    ) -> T:
        """``read`` of the statement's output, called while the session is held: an
        answer it refuses (``StoreError``) discards the session like a failed statement."""
        with pool.session() as s:
            try:
                # No params for a statement without them: an INSERT's data may hold
                # text that reads like a placeholder.
                res = s.query(sql, fmt, params=bind_values(params)) if params else s.query(sql, fmt)
            except Exception as exc:  # chDB raises its own error types
                raise engine_error(exc) from exc
            return read(res.bytes())

    def insert(self, tenant: Tenant, rows: Sequence[EventRow]) -> None:
        """Store the rows durably: a small batch in the write-ahead log (a read waits for
        it to reach the engine, ``query``), a large one, or one over more than 100 days,
        by an INSERT of its own."""
        if not rows:
            return
        body = encode_rows(tenant, rows)
        if self._buffer is not None and len(rows) < DIRECT_ROWS and len(body) < DIRECT_BYTES:
            first = min(r.timestamp_ms for r in rows) // DAY_MS
            last = max(r.timestamp_ms for r in rows) // DAY_MS
            if last - first < MAX_DAYS_PER_INSERT:
                self._buffer.append(Record(tenant, len(rows), first, last, body))
                return
        self._insert(body, _INSERT_SETTINGS)

    def insert_block(self, body: bytes) -> None:
        """INSERT a block of the write-ahead log (``encode_rows``), returning once it is on
        disk."""
        self._insert(body, _BLOCK_SETTINGS)

    def _insert(self, body: bytes, settings: str) -> None:
        # A synchronous insert makes one part per day and returns once it is written.
        sql = f"INSERT INTO {self.table} ({_COLUMNS}) SETTINGS {settings} FORMAT TSV\n"
        # As bytes: chDB takes them as they are, where a str would be decoded and copied
        # (2 µs an event of 0.5 kB, and the body's size in memory once more).
        self._run(self._inserts, sql.encode() + body, "CSV", _text)

    def stored_ids(
        self, tenant: Tenant, ids: Sequence[str], first_ms: int, last_ms: int
    ) -> set[str]:
        """Which of ``ids`` the table holds for ``tenant`` between the times (inclusive)."""
        sql = (
            f"SELECT id FROM {self.table} WHERE workspace_id = {{w:String}}"
            " AND environment_id = {e:String}"
            " AND timestamp BETWEEN fromUnixTimestamp64Milli({a:Int64})"
            " AND fromUnixTimestamp64Milli({b:Int64}) AND id IN {ids:Array(String)}"
        )
        params = {
            "w": tenant.workspace_id,
            "e": tenant.environment_id,
            "a": first_ms,
            "b": last_ms,
            "ids": list(ids),
        }
        found = self._run(self._reads, sql, RESULT_FORMAT, lambda out: decode_result(out), params)
        return {row["id"] for row in found.rows}

    def _read_your_writes(self, params: Mapping[str, Any]) -> None:
        """Wait for the buffered events of the tenants a statement names: every statement
        over a tenant's events binds its workspace and environment (``query.scope``), so a
        read sees every event acknowledged before it began."""
        if self._buffer is None or not params:
            return
        pending = self._buffer.pending_tenants()
        if not pending:
            return
        values = {v for v in params.values() if isinstance(v, str)}
        for tenant in pending:
            if tenant.workspace_id in values and tenant.environment_id in values:
                self._buffer.flush(tenant, self._flush_timeout)

    def query(
        self, sql: str, params: Mapping[str, Any], columns: Sequence[str] | None = None
    ) -> QueryResult:
        self._read_your_writes(params)
        return self._run(
            self._reads, sql, RESULT_FORMAT, lambda out: decode_result(out, columns), params
        )

    def command(self, sql: str, params: Mapping[str, Any] | None = None) -> None:
        self._read_your_writes(params or {})
        self._run(self._reads, sql, "CSV", _text, params)

    def disk_bytes(self) -> int:
        """The engine's data directory: its parts, those merged and not yet removed, its
        metadata and logs."""
        return directory_bytes(self._path)


def directory_bytes(root: Path) -> int:
    """The sizes of the files under ``root``, each counted once: symbolic links are not
    followed (a table's folder under data/ links to its folder under store/), and a file
    with several hard links (a mutation's new part links the columns it did not change)
    counts once. Files that merges and their clean-up remove during the walk are skipped."""
    total = 0
    linked: set[tuple[int, int]] = set()
    folders = [str(root)]
    while folders:
        try:
            entries = list(os.scandir(folders.pop()))
        except FileNotFoundError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue
                status = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            if status.st_nlink > 1:
                if (status.st_dev, status.st_ino) in linked:
                    continue
                linked.add((status.st_dev, status.st_ino))
            total += status.st_size
    return total


def _text(output: bytes) -> str:
    return output.decode()
