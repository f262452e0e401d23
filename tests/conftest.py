"""Shared fixtures: a real server process, CLI access to its metadata, tenants."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support import LiveServer, Tenant, launch, launch_scaled


def _temporary_files_in_memory() -> None:
    """The run's temporary files (tmp_path, and the data directories of the servers and
    engines it starts) on the machine's tmpfs, unless TMPDIR names a place. The suite
    syncs what it writes as production does (the write-ahead log, SQLite, the engine's
    parts), and on a disk each sync costs CPU and a wait. Seven modules that start servers
    and engines (backups, durability, serving, the events API, buffered inserts, ingest,
    retention), two runs each, alternating on 2 cores: 149 and 131 CPU-seconds on the
    disk against 128 and 119 here (system time 23.5 against 15), wall 148 and 132 s
    against 122 and 117 s."""
    shm = Path("/dev/shm")
    if "TMPDIR" in os.environ or not (shm.is_dir() and os.access(shm, os.W_OK)):
        return
    os.environ["TMPDIR"] = str(shm)  # for the processes the tests start too
    tempfile.tempdir = None  # read again on the next gettempdir()


_temporary_files_in_memory()

# Property tests (tests/properties): a bounded number of examples per test in `make test`;
# HYPOTHESIS_PROFILE=thorough looks much further. No deadline: the machine is shared and
# an example's time says nothing about its correctness.
settings.register_profile(
    "limelight",
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("thorough", parent=settings.get_profile("limelight"), max_examples=5000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "limelight"))


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, LiveServer]]:
    """The session's servers by mode, each started on first use and kept to the end.

    Not a parametrized session fixture: pytest tears one of those down whenever the
    next test wants the other parameter, and with the modules handed out to workers
    one at a time that restarted the servers a dozen times per worker (3-4 s each).
    """
    started: dict[str, LiveServer] = {}
    yield started
    for srv in started.values():
        srv.stop()


@pytest.fixture(scope="module", params=["embedded", "scaled"])
def server(
    request: pytest.FixtureRequest,
    servers: dict[str, LiveServer],
    tmp_path_factory: pytest.TempPathFactory,
) -> LiveServer:
    """One real server for the whole test session, in each mode: embedded (one process,
    SQLite and chDB) and scaled (two API processes, PostgreSQL and a ClickHouse double)."""
    mode = request.param
    if mode not in servers:
        if mode == "scaled":
            servers[mode] = launch_scaled(tmp_path_factory.mktemp("scaled"))
        else:
            servers[mode] = launch(tmp_path_factory.mktemp("server"))
    return servers[mode]


@pytest.fixture()
def tenant(server: LiveServer) -> Tenant:
    """A fresh workspace with one environment, an ingest key and an admin key."""
    return server.new_tenant()


@pytest.fixture()
def other_tenant(server: LiveServer) -> Tenant:
    return server.new_tenant()
