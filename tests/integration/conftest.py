"""Fixtures of the integration tests: the metadata database on SQLite and PostgreSQL.

The PostgreSQL cases run in a schema of their own (dropped afterwards) on
127.0.0.1:5432, database ``test``; they are skipped, saying why, when no
server answers there.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from limelight.store.meta.db import MetaDB
from tests.support import postgres_schema


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MetaDB]:
    if request.param == "sqlite":
        meta = MetaDB(f"sqlite:///{tmp_path / 'meta.db'}")
        meta.migrate()
        yield meta
        meta.dispose()
        return
    schemas = postgres_schema()
    url = next(schemas)
    meta = MetaDB(url)
    try:
        meta.migrate()
        yield meta
    finally:
        meta.dispose()
        next(schemas, None)
