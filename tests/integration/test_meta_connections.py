"""Pooled metadata connections carry nothing from a failed transaction to the next one;
on SQLite, a transaction that reads and then writes holds the write lock from its start,
and one that does not is refused every time, not only when a write races it."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError

from limelight.store.meta import repos
from limelight.store.meta.db import MetaDB, WriteAfterRead
from limelight.store.meta.models import Workspace, utcnow
from tests.support import migrated_sqlite


def _count(db: MetaDB, name: str) -> int:
    with db.connection() as c:
        return int(c.execute(select(func.count()).where(Workspace.name == name)).scalar() or 0)


def test_a_failed_transaction_leaves_no_rows_and_no_lock(db: MetaDB) -> None:
    name = f"ws-{uuid.uuid4().hex[:8]}"
    row = {"id": uuid.uuid4().hex[:20], "name": name, "created_at": utcnow()}
    for _ in range(3):  # every pooled connection in turn
        with pytest.raises(IntegrityError), db.connection(immediate=True) as c:
            c.execute(insert(Workspace), row)
            c.execute(insert(Workspace), row)  # the same id again: the transaction fails
        assert _count(db, name) == 0
    # The next write transaction starts at once (no lock left held) and commits alone.
    with db.session(immediate=True) as s:
        repos.create_workspace(s, name)
    assert _count(db, name) == 1


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[MetaDB]:
    meta = migrated_sqlite(tmp_path / "meta.db")
    yield meta
    meta.dispose()


def test_a_deferred_read_then_write_is_refused_and_leaves_nothing(sqlite_db: MetaDB) -> None:
    name = f"ws-{uuid.uuid4().hex[:8]}"
    for _ in range(3):  # every pooled connection in turn, and nothing carried to the next
        with pytest.raises(WriteAfterRead, match="immediate=True"), sqlite_db.session() as s:
            assert _count(sqlite_db, name) == 0
            s.execute(select(Workspace).where(Workspace.name == name)).all()
            repos.create_workspace(s, name)
        assert _count(sqlite_db, name) == 0
    with sqlite_db.session(immediate=True) as s:
        s.execute(select(Workspace).where(Workspace.name == name)).all()
        repos.create_workspace(s, name)
    assert _count(sqlite_db, name) == 1


def test_deferred_transactions_that_only_read_or_write_first_are_allowed(
    sqlite_db: MetaDB,
) -> None:
    name = f"ws-{uuid.uuid4().hex[:8]}"
    with sqlite_db.session() as s:
        # The first statement is the write: it takes the lock, waiting if need be.
        s.add(Workspace(id=uuid.uuid4().hex[:20], name=name, created_at=utcnow()))
        s.flush()
        assert s.scalar(select(func.count()).where(Workspace.name == name)) == 1
    with sqlite_db.session() as s:
        assert s.scalar(select(func.count()).where(Workspace.name == name)) == 1


def test_a_read_by_a_with_statement_counts_and_a_write_first_holds_the_lock(
    sqlite_db: MetaDB,
) -> None:
    insert = "INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, '2026-01-01')"
    with pytest.raises(WriteAfterRead), sqlite_db.connection() as c:
        c.exec_driver_sql("WITH w AS (SELECT id FROM workspaces) SELECT count(*) FROM w")
        c.exec_driver_sql(insert, (uuid.uuid4().hex[:20], "with-read"))
    assert _count(sqlite_db, "with-read") == 0
    # Written first, the lock is held to the commit: reading and writing again is safe.
    with sqlite_db.connection() as c:
        c.exec_driver_sql(insert, (uuid.uuid4().hex[:20], "first"))
        c.exec_driver_sql("SELECT count(*) FROM workspaces").all()
        c.exec_driver_sql(insert, (uuid.uuid4().hex[:20], "second"))
    assert _count(sqlite_db, "first") == _count(sqlite_db, "second") == 1


def test_an_immediate_read_then_write_waits_for_another_writer_instead_of_failing(
    sqlite_db: MetaDB,
) -> None:
    """What a deferred transaction cannot do: another connection writes meanwhile, and
    this one still commits (it waits for the lock rather than losing its snapshot)."""
    held = threading.Event()
    other = f"other-{uuid.uuid4().hex[:8]}"

    def other_writer() -> None:
        with sqlite_db.session(immediate=True) as s:
            s.add(Workspace(id=uuid.uuid4().hex[:20], name=other, created_at=utcnow()))
            s.flush()
            held.set()
            time.sleep(0.3)  # holds the write lock a while; the outcome does not depend on it

    thread = threading.Thread(target=other_writer)
    thread.start()
    assert held.wait(10)
    name = f"ws-{uuid.uuid4().hex[:8]}"
    with sqlite_db.session(immediate=True) as s:
        # BEGIN IMMEDIATE waited for the other's commit: its row is already visible.
        assert s.scalar(select(func.count()).where(Workspace.name == other)) == 1
        repos.create_workspace(s, name)
    thread.join(10)
    assert _count(sqlite_db, name) == 1
