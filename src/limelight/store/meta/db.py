"""The metadata database: engine, sessions and migrations (SQLite or PostgreSQL)."""

from __future__ import annotations

import fcntl
import re
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.exc import DataError
from sqlalchemy.orm import Session, sessionmaker

from limelight.errors import BadRequest, LimelightError

MIGRATIONS = Path(__file__).parent / "migrations"


class Sealing(Protocol):
    """What a migration that encrypts stored secrets needs (``auth.sealing.Sealer``)."""

    def seal(self, text: str) -> str: ...

    def open(self, token: str) -> str: ...


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            # WAL lets the CLI write while the server reads; foreign keys are off
            # by default. pysqlite's own BEGIN handling is switched off so that
            # the "begin" hook below decides how a transaction starts.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Any) -> None:
            # A session or connection opened with immediate=True takes the write lock at its
            # start, so read-then-write transactions serialise.
            immediate = conn.get_execution_options().get("immediate", False)
            conn.info[_READ_IN_DEFERRED] = None if immediate else False
            conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        @event.listens_for(engine, "before_cursor_execute")
        def _sqlite_no_write_after_read(
            conn: Any, _cursor: Any, statement: str, _params: Any, context: Any, _many: bool
        ) -> None:
            dml = context is not None and (context.isinsert or context.isupdate or context.isdelete)
            refuse_write_after_read(conn.info, statement, dml)

        return engine
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    return create_engine(url, pool_pre_ping=True)


_READ_IN_DEFERRED = "limelight.read_in_deferred"
_FIRST_WORD = re.compile(r"\s*(\w+)")
_WRITES = frozenset({"INSERT", "UPDATE", "DELETE", "REPLACE"})
_READS = frozenset({"SELECT", "WITH", "VALUES"})


class WriteAfterRead(LimelightError):
    """A write in a SQLite transaction that began deferred and has already read: a fault
    of the code that opened it (see ``refuse_write_after_read``)."""


def refuse_write_after_read(info: dict[str, Any], statement: str, dml: bool) -> None:
    """Make a read-then-write transaction without the write lock fail every time.

    In WAL mode a deferred transaction reads from a snapshot; its first write must
    upgrade to the write lock, and if any other connection committed since the
    snapshot, SQLite answers "database is locked" at once, without waiting for the
    busy timeout. Such a transaction works alone and fails only when another write
    lands in between, so a test would rarely see it (the consent page's approval
    failed that way under a concurrent write). Refusing it always turns the race
    into an error that every test of the path hits; the fix is ``immediate=True``.

    ``dml``: SQLAlchemy compiled the statement as an INSERT, UPDATE or DELETE (a
    ``WITH`` statement may be either). None in ``info`` means nothing is left to
    watch: the transaction began immediate, or its first write took the lock.
    """
    if info.get(_READ_IN_DEFERRED) is None:
        return
    first = _FIRST_WORD.match(statement)
    verb = first.group(1).upper() if first else ""
    if dml or verb in _WRITES:
        if info[_READ_IN_DEFERRED]:
            raise WriteAfterRead(
                "a SQLite transaction that reads and then writes must be opened with "
                "immediate=True: " + statement.lstrip()[:60]
            )
        info[_READ_IN_DEFERRED] = None
    elif verb in _READS:
        info[_READ_IN_DEFERRED] = True


class MetaDB:
    """Owns the engine and hands out sessions; one per process."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        # Built once: deriving it per transaction cost 0.2 ms, as much as a small write.
        self._immediate = self.engine.execution_options(immediate=True)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._startup_mutex = threading.RLock()
        self._startup_depth = 0
        self._watch: sqlite3.Connection | None = None
        self._watch_lock = threading.Lock()

    @contextmanager
    def session(self, *, immediate: bool = False) -> Iterator[Session]:
        """A unit of work: committed on success, rolled back on error.

        ``immediate`` takes SQLite's write lock up front (PostgreSQL ignores it).
        """
        with (
            _refusing_nul(),
            self._sessions(bind=self._immediate if immediate else self.engine) as s,
            s.begin(),
        ):
            yield s

    @contextmanager
    def connection(self, *, immediate: bool = False) -> Iterator[Connection]:
        """A plain connection in a transaction, committed on success: for the statements
        of every request or run (the API-key lookup, a run's record), where a session's
        unit of work costs more than the statement (0.36 ms against 0.10 ms for the
        key lookup on SQLite)."""
        with _refusing_nul(), (self._immediate if immediate else self.engine).begin() as c:
            yield c

    @contextmanager
    def startup_lock(self) -> Iterator[None]:
        """Held while a process brings the stores up to date: processes that start
        together (``serve --workers N``, replicas) take turns, and each finds what the
        one before it applied.

        Without it two processes starting on fresh stores ran the same migrations at
        once: one failed on a table the other had just created, or wrote through a
        view whose table the other had just changed (ClickHouse: "Number of columns
        doesn't match"), and its server exited at start. PostgreSQL: an advisory lock
        per schema. SQLite: an ``flock`` beside the database file. Re-entrant within
        this MetaDB, so ``migrate`` may run under it.
        """
        with self._startup_mutex:
            if self._startup_depth:
                self._startup_depth += 1
                try:
                    yield
                finally:
                    self._startup_depth -= 1
                return
            with self._startup_lock_held():
                self._startup_depth = 1
                try:
                    yield
                finally:
                    self._startup_depth = 0

    @contextmanager
    def _startup_lock_held(self) -> Iterator[None]:
        if self.engine.dialect.name == "postgresql":
            key = text("SELECT hashtext('limelight.startup:' || current_schema())")
            with self.engine.connect() as c:
                lock_key = c.execute(key).scalar_one()
                c.execute(text("SELECT pg_advisory_lock(:k)"), {"k": lock_key})
                c.commit()
                try:
                    yield
                finally:
                    c.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": lock_key})
                    c.commit()
            return
        database = self.engine.url.database
        if not database or database == ":memory:":
            yield  # one process's own database: nobody to take turns with
            return
        with open(f"{database}.startup.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def migrate(self, revision: str = "head", sealer: Sealing | None = None) -> None:
        """Apply Alembic migrations up to ``revision`` (tests stop earlier to test one).
        ``sealer``: the installation's, for a migration that encrypts stored secrets
        (one that meets a secret without it stops, changing nothing)."""
        from alembic import command
        from alembic.config import Config

        cfg = Config()
        cfg.set_main_option("script_location", str(MIGRATIONS))
        cfg.attributes["sealer"] = sealer
        # Immediate: a migration reads the schema version, then writes.
        cfg.attributes["connection_engine"] = self._immediate
        with self.startup_lock():
            command.upgrade(cfg, revision)

    def disk_bytes(self) -> int | None:
        """Bytes of the database on disk, for /metrics: PostgreSQL's size of the whole
        database; SQLite's file and its write-ahead log (which a checkpoint reuses rather
        than truncates); None for an in-memory database."""
        if self.engine.dialect.name == "postgresql":
            with self.engine.connect() as c:
                size = c.execute(text("SELECT pg_database_size(current_database())"))
                return int(size.scalar_one())
        database = self.engine.url.database
        if not database or database == ":memory:":
            return None
        return sum(_file_bytes(Path(f"{database}{suffix}")) for suffix in ("", "-wal"))

    def change_count(self) -> int | None:
        """A number that changes whenever a connection, of this process or another (the
        CLI's), commits to the database: SQLite's ``data_version``, read on a connection
        of its own that never writes (15 µs, against 130 µs of CPU for the API-key
        lookup through the pool). None where there is no such counter (PostgreSQL, an
        in-memory database): then nothing may be trusted from an earlier read."""
        database = self.engine.url.database
        if self.engine.dialect.name != "sqlite" or not database or database == ":memory:":
            return None
        with self._watch_lock:
            if self._watch is None:
                self._watch = sqlite3.connect(
                    database, isolation_level=None, check_same_thread=False, timeout=30
                )
            row = self._watch.execute("PRAGMA data_version").fetchone()
        return int(row[0])

    def dispose(self) -> None:
        with self._watch_lock:
            if self._watch is not None:
                self._watch.close()
                self._watch = None
        self.engine.dispose()


def _file_bytes(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:  # no write-ahead log yet, or none left after the last close
        return 0


@contextmanager
def _refusing_nul() -> Iterator[None]:
    """PostgreSQL's text cannot hold U+0000, which SQLite's can: a value holding it (a
    board's name, an id in an address, an OAuth client id) is the request's fault, and
    answered 500 in server mode. Refused as such, whichever statement met it."""
    try:
        yield
    except DataError as exc:
        if "NUL" not in str(exc.orig):
            raise
        raise BadRequest("text may not contain the character U+0000") from None
