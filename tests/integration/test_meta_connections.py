"""Pooled metadata connections carry nothing from a failed transaction to the next one."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError

from limelight.store.meta import repos
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import Workspace, utcnow


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
