"""Shared fixtures: a real server process, CLI access to its metadata, tenants."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support import LiveServer, Tenant


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(data_dir: Path, extra_env: dict[str, str] | None = None) -> LiveServer:
    port = free_port()
    env = {
        **os.environ,
        "LIMELIGHT_DATA_DIR": str(data_dir),
        "LIMELIGHT_PORT": str(port),
        "LIMELIGHT_HOST": "127.0.0.1",
        **(extra_env or {}),
    }
    server = LiveServer(data_dir=data_dir, port=port, env=env)
    server.start()
    return server


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One real server process for the whole test session (chDB: one engine per data dir)."""
    srv = start_server(tmp_path_factory.mktemp("server"))
    yield srv
    srv.stop()


@pytest.fixture()
def tenant(server: LiveServer) -> Tenant:
    """A fresh workspace with one environment, an ingest key and an admin key."""
    return server.new_tenant()


@pytest.fixture()
def other_tenant(server: LiveServer) -> Tenant:
    return server.new_tenant()


__all__ = ["free_port", "start_server", "httpx", "subprocess", "sys", "time"]
