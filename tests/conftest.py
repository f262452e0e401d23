"""Shared fixtures: a real server process, CLI access to its metadata, tenants."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import LiveServer, Tenant, launch


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One real server process for the whole test session (chDB: one engine per data dir)."""
    srv = launch(tmp_path_factory.mktemp("server"))
    yield srv
    srv.stop()


@pytest.fixture()
def tenant(server: LiveServer) -> Tenant:
    """A fresh workspace with one environment, an ingest key and an admin key."""
    return server.new_tenant()


@pytest.fixture()
def other_tenant(server: LiveServer) -> Tenant:
    return server.new_tenant()
