"""What the shipper tests share: events read back through a query run, waiting for a
shipper that sends in the background, and the tools a test cannot run without."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests import web
from tests.support import LiveServer, Tenant

HOUR_MS = 3_600_000


def run(
    server: LiveServer, tenant: Tenant, query: dict[str, Any], around_ms: int | None = None
) -> dict[str, Any]:
    """A query run over the two hours around ``around_ms`` (now by default); its ``data``."""
    at = around_ms if around_ms is not None else int(time.time() * 1000)
    body = {"query": query, "from": at - HOUR_MS, "to": at + HOUR_MS, "limit": 1000}
    with web.Client(
        base_url=server.url, headers={"Authorization": tenant.admin_key}, timeout=30
    ) as client:
        created = client.post("/v1/query_run", json=body, params={"wait": 15})
        assert created.status_code == 200, created.text
        result = created.json()
    assert result["query_run"]["status"] == "COMPLETED", result
    data: dict[str, Any] = result["data"]
    return data


def stored(
    server: LiveServer, tenant: Tenant, dataset: str, around_ms: int | None = None
) -> list[dict[str, Any]]:
    """The events of one dataset, with their system fields, newest first."""
    query = {"namespaces": [{"type": "dataset", "value": dataset}]}
    events: list[dict[str, Any]] = run(server, tenant, query, around_ms)["events"]
    return events


def wait_for_events(
    server: LiveServer,
    tenant: Tenant,
    dataset: str,
    count: int,
    seconds: float = 30,
    around_ms: int | None = None,
) -> list[dict[str, Any]]:
    """The events of ``dataset`` once there are at least ``count`` (a shipper that sends
    in the background has no answer to wait on); fails after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        events = stored(server, tenant, dataset, around_ms)
        if len(events) >= count or time.monotonic() > deadline:
            return events
        time.sleep(0.2)


def wait_until(check: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds:g} s waiting for {what}")
        time.sleep(0.1)


def need_tool(name: str, install: str) -> str:
    """The path of the program ``name``; the test is skipped without it, saying how to
    install it, except under CI (CI=true), where a missing tool is a failure."""
    path = shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/sbin/{name}") if os.access(p, os.X_OK)), None
    )
    if path is None:
        message = f"{name} is not installed ({install}; .ci/run installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path
