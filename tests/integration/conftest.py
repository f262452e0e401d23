"""Fixtures of the integration tests: the metadata database on SQLite and PostgreSQL, and
the events store on both of its transports.

The PostgreSQL cases run in a schema of their own (dropped afterwards) on
127.0.0.1:5432, database ``test``; they are skipped, saying why, when no
server answers there. The events store is the embedded engine (chDB in this
process) and a ClickHouse server over HTTP (clickhouse-connect, against the
ClickHouse double; against a real server too when LIMELIGHT_TEST_CLICKHOUSE_URL
names one), each in a database of its own.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from limelight.store.events.base import EventStore
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.store.events.server_store import ServerEventStore
from limelight.store.meta.db import MetaDB
from tests import query_reference as ref
from tests.support import (
    ClickHouseDouble,
    launch_clickhouse_double,
    migrated_sqlite,
    postgres_schema,
)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MetaDB]:
    if request.param == "sqlite":
        meta = migrated_sqlite(tmp_path / "meta.db")
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


REAL_SERVER = os.environ.get("LIMELIGHT_TEST_CLICKHOUSE_URL")
TRANSPORTS = [
    "chdb",
    "server",
    pytest.param(
        "real",
        marks=pytest.mark.skipif(
            not REAL_SERVER, reason="set LIMELIGHT_TEST_CLICKHOUSE_URL to run against a server"
        ),
    ),
]


@pytest.fixture(scope="module", params=TRANSPORTS)
def store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EventStore]:
    database = f"events_{uuid.uuid4().hex[:8]}"
    if request.param == "chdb":
        shared = ref.shared_chdb_store(tmp_path_factory)
        chdb = ChdbEventStore(shared.path, database=database)
        chdb.start()
        yield chdb
        chdb.close()
        return
    if request.param == "server":
        double: ClickHouseDouble = request.getfixturevalue("clickhouse_double")
        # Shared by the process's modules: one that died says so here, not as the
        # connection errors of every module after it.
        assert double.proc.poll() is None, f"the ClickHouse double exited: {double.proc.returncode}"
        url = double.url
    else:
        url = str(REAL_SERVER)
    server = ServerEventStore(url, database=database)
    server.start()
    try:
        yield server
    finally:
        server.command(f"DROP DATABASE IF EXISTS {database}")
        server.close()


@pytest.fixture(scope="session")
def clickhouse_double(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClickHouseDouble]:
    """One double for the test process's modules, each in a database of its own (1.6 s
    of CPU a start: the modules of the ``server`` transport started one each)."""
    double = launch_clickhouse_double(tmp_path_factory.mktemp("double"))
    yield double
    double.stop()
