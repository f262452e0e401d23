"""Node.js loggers from npm, unmodified but for the address and the key: pino into
pino-elasticsearch (the Elasticsearch client's bulk helper, then its index refresh) and
into pino-loki (batched JSON pushes). The scripts are in tests/e2e/node; their packages
are installed by ``npm install`` there (.ci/run does it)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.shipper_support import need_tool, stored
from tests.support import LiveServer, Tenant

NODE = Path(__file__).parent / "node"
COUNT = 40


@pytest.fixture(scope="module")
def tenant(server: LiveServer) -> Tenant:
    return server.new_tenant()


def send(server: LiveServer, tenant: Tenant, script: str, **env: str) -> str:
    node = need_tool("node", "apt-get install nodejs npm")
    if not (NODE / "node_modules").is_dir():
        message = "tests/e2e/node has no node_modules: run `npm install --no-package-lock` there"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    env = {**os.environ, "LIMELIGHT_URL": server.url, "LIMELIGHT_KEY": tenant.ingest_key,
           "COUNT": str(COUNT), **env}  # fmt: skip
    done = subprocess.run([node, script], cwd=NODE, env=env, capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not done.stderr.strip(), done.stderr
    return done.stdout


def check(events: list[dict[str, object]], dataset: str, since: float) -> None:
    assert len(events) == COUNT
    assert sorted(str(e["orderId"]) for e in events) == sorted(f"o-{i}" for i in range(COUNT))
    for event in events:
        assert event["msg"] == "order placed" and event["_dataset"] == dataset
        assert event["_service"] == "shop"
        stamp = event["_timestamp"]
        assert isinstance(stamp, int) and since * 1000 - 1 <= stamp <= time.time() * 1000


def test_pino_elasticsearch(server: LiveServer, tenant: Tenant) -> None:
    since = time.time()
    out = send(server, tenant, "send_es.mjs", INDEX="pino-es")
    assert f"inserted {COUNT} failed 0" in out
    events = stored(server, tenant, "pino-es")
    check(events, "pino-es", since)
    # pino's time (ISO 8601 from the transport) is the event's time, to the millisecond.
    assert all(isinstance(e["time"], str) for e in events)


def test_pino_loki(server: LiveServer, tenant: Tenant) -> None:
    since = time.time()
    assert send(server, tenant, "send_loki.mjs", DATASET="pino-loki").strip() == "sent"
    events = stored(server, tenant, "pino-loki")
    check(events, "pino-loki", since)
    # The line is pino's JSON (its fields kept); pino-loki's labels and structured
    # metadata are keys too, the line's own fields winning (its numeric level).
    assert {(e["level"], e["hostname"] is not None) for e in events} == {(30, True)}
    assert sorted(str(e["traceId"]) for e in events) == sorted(f"t-{i}" for i in range(COUNT))
