"""Fixtures of the integration tests: the metadata database on SQLite and PostgreSQL.

The PostgreSQL cases run in a schema of their own (dropped afterwards) on
127.0.0.1:5432, database ``test``; they are skipped, saying why, when no
server answers there.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from limelight.store.meta.db import MetaDB

PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def _postgres_schema() -> Iterator[str]:
    try:
        admin = create_engine(PG_URL, connect_args={"connect_timeout": 2})
        with admin.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:
        pytest.skip(f"PostgreSQL is not reachable on 127.0.0.1:5432 (db test): {exc}")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield f"{PG_URL}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MetaDB]:
    if request.param == "sqlite":
        meta = MetaDB(f"sqlite:///{tmp_path / 'meta.db'}")
        meta.migrate()
        yield meta
        meta.dispose()
        return
    schemas = _postgres_schema()
    url = next(schemas)
    meta = MetaDB(url)
    try:
        meta.migrate()
        yield meta
    finally:
        meta.dispose()
        next(schemas, None)
