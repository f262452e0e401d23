"""Migration 0004: admin keys made without an owner, and their queries, get the workspace's
first member; where a workspace has none they stay as they were. SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from limelight.store.meta.db import MetaDB
from tests.support import postgres_schema

ROWS = """
INSERT INTO workspaces (id, name, created_at) VALUES
  ('ws_team', 'team', '2026-01-01 00:00:00'), ('ws_lone', 'lone', '2026-01-01 00:00:00');
INSERT INTO environments (id, workspace_id, name, redact_secrets, created_at) VALUES
  ('env_team', 'ws_team', 'prod', true, '2026-01-01 00:00:00'),
  ('env_lone', 'ws_lone', 'prod', true, '2026-01-01 00:00:00');
INSERT INTO users (id, email, password_hash, created_at) VALUES
  ('u_ann', 'ann@x.test', 'h', '2026-01-01 00:00:00'),
  ('u_bob', 'bob@x.test', 'h', '2025-01-01 00:00:00');
INSERT INTO memberships (user_id, workspace_id, created_at) VALUES
  ('u_bob', 'ws_team', '2026-02-01 00:00:00'), ('u_ann', 'ws_team', '2026-01-02 00:00:00');
INSERT INTO api_keys (id, environment_id, kind, name, key_hash, display, user_id, created_at)
VALUES
  ('k_team', 'env_team', 'admin', '', 'h1', 'd', NULL, '2026-01-03 00:00:00'),
  ('k_owned', 'env_team', 'admin', '', 'h2', 'd', 'u_bob', '2026-01-03 00:00:00'),
  ('k_ingest', 'env_team', 'ingest', '', 'h3', 'd', NULL, '2026-01-03 00:00:00'),
  ('k_lone', 'env_lone', 'admin', '', 'h4', 'd', NULL, '2026-01-03 00:00:00');
INSERT INTO queries (id, workspace_id, environment_id, fields, author, created_at, updated_at)
VALUES
  ('q_team', 'ws_team', 'env_team', '{}', NULL, '2026-01-04 00:00:00', '2026-01-04 00:00:00'),
  ('q_bob', 'ws_team', 'env_team', '{}', 'u_bob', '2026-01-04 00:00:00', '2026-01-04 00:00:00'),
  ('q_lone', 'ws_lone', 'env_lone', '{}', NULL, '2026-01-04 00:00:00', '2026-01-04 00:00:00');
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


def test_owners_and_authors_are_filled_from_the_first_member(db: MetaDB) -> None:
    db.migrate("0003")
    with db.connection() as c:
        for statement in ROWS.split(";"):
            if statement.strip():
                c.execute(text(statement))
    db.migrate()
    with db.connection() as c:
        owners = {row[0]: row[1] for row in c.execute(text("SELECT id, user_id FROM api_keys"))}
        authors = {row[0]: row[1] for row in c.execute(text("SELECT id, author FROM queries"))}
    # ann joined the team first (bob's account is older, but joined later).
    assert owners == {"k_team": "u_ann", "k_owned": "u_bob", "k_ingest": None, "k_lone": None}
    assert authors == {"q_team": "u_ann", "q_bob": "u_bob", "q_lone": None}
