"""Migration 0009: boards and their panels on a database of 0008 with queries in it, on
SQLite and PostgreSQL; the database itself refuses a panel without its query."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from limelight.store.meta.db import MetaDB
from tests.support import postgres_schema

ROWS = """
INSERT INTO workspaces (id, name, created_at) VALUES ('ws', 'team', '2026-01-01 00:00:00');
INSERT INTO environments (id, workspace_id, name, redact_secrets, created_at) VALUES
  ('env', 'ws', 'prod', true, '2026-01-01 00:00:00');
INSERT INTO queries (id, workspace_id, environment_id, fields, author, created_at, updated_at)
VALUES ('q1', 'ws', 'env', '{}', NULL, '2026-01-04 00:00:00', '2026-01-04 00:00:00');
"""
BOARD = """
INSERT INTO boards (id, workspace_id, environment_id, name, created_at, updated_at)
VALUES ('b1', 'ws', 'env', 'Ops', '2026-01-05 00:00:00', '2026-01-05 00:00:00');
INSERT INTO board_panels (id, board_id, position, query_id, visualization, width)
VALUES ('p1', 'b1', 0, 'q1', 'line', 2);
"""


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MetaDB]:
    schemas = postgres_schema() if request.param == "postgres" else None
    url = next(schemas) if schemas else f"sqlite:///{tmp_path / 'meta.db'}"
    meta = MetaDB(url)
    try:
        yield meta
    finally:
        meta.dispose()
        if schemas:
            next(schemas, None)


def _run(db: MetaDB, statements: str) -> None:
    with db.connection() as c:
        for statement in statements.split(";"):
            if statement.strip():
                c.execute(text(statement))


def test_boards_come_with_0011_and_keep_their_queries(db: MetaDB) -> None:
    db.migrate("0010")
    _run(db, ROWS)
    db.migrate()
    _run(db, BOARD)
    with db.connection() as c:
        panel = c.execute(
            text(
                "SELECT board_id, position, query_id, title, visualization, width FROM board_panels"
            )
        ).one()
    assert tuple(panel) == ("b1", 0, "q1", "", "line", 2)  # the title defaults to ''

    # A query shown on a board cannot go, even by a statement that skips the check.
    with pytest.raises(IntegrityError):
        _run(db, "DELETE FROM queries WHERE id = 'q1'")
    # Two panels cannot share a place.
    with pytest.raises(IntegrityError):
        _run(db, "INSERT INTO board_panels (id, board_id, position, query_id, visualization, "
                 "width) VALUES ('p2', 'b1', 0, 'q1', 'table', 1)")  # fmt: skip
    # Deleting a board takes its panels with it.
    _run(db, "DELETE FROM boards WHERE id = 'b1'")
    with db.connection() as c:
        assert c.execute(text("SELECT count(*) FROM board_panels")).scalar() == 0
