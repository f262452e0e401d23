"""Two tenants query at once while failures of each kind are provoked; no answer ever
holds the other tenant's data.

A statement that fails part way leaves output in its engine session (see
store/events/chdb_store.py); this drives the whole path, HTTP to engine, with
runs that overflow the result limit, time out and fail in the engine, beside
runs of the same shape that complete. ``LIMELIGHT_TEST_ISOLATION_RUNS`` sets the
number of runs (the default keeps ``make test`` quick).
"""

from __future__ import annotations

import os
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests import web
from tests.support import LiveServer, Tenant, launch

RUNS = int(os.environ.get("LIMELIGHT_TEST_ISOLATION_RUNS", "400"))
EVENTS = 3_000


@pytest.fixture(scope="module")
def small_limits_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = launch(
        tmp_path_factory.mktemp("isolation"),
        {
            "LIMELIGHT_QUERY_MAX_RESULT_BYTES": "65536",
            "LIMELIGHT_QUERY_RUNS_PER_MINUTE": "1000000",
        },
    )
    yield server
    server.stop()


def _events(marker: str, now_ms: int) -> list[dict[str, Any]]:
    return [
        {
            "timestamp": now_ms - 1_000 - i * 997,
            "requestId": f"{marker}-req-{i}",
            "userId": f"{marker}-user-{i % 700}",
            "message": f"{marker} handled request {i}",
            "duration": i % 250,
        }
        for i in range(EVENTS)
    ]


def _shapes(keys: tuple[str, str, str, str]) -> list[dict[str, Any]]:
    group_a, group_b, distinct, median = keys
    grouped = {
        "group_bys": [{"key": group_a}, {"key": group_b}],
        "calculations": [
            {"operator": "COUNT_DISTINCT", "key": distinct},
            {"operator": "MEDIAN", "key": median},
        ],
    }
    return [
        grouped,  # over the result limit for the tenant whose keys these are
        {"calculations": [{"operator": "COUNT"}], "group_bys": [{"key": "_service"}]},
        {},  # the newest events
        {"needle": {"value": "(", "isRegex": True}},  # an engine error (bad pattern)
    ]


def test_no_answer_holds_another_tenants_data(small_limits_server: LiveServer) -> None:
    server = small_limits_server
    now = int(time.time() * 1000)
    tenants: dict[str, Tenant] = {}
    for _ in range(2):
        marker = f"mk{uuid.uuid4().hex[:12]}"
        tenants[marker] = server.new_tenant()
        for start in range(0, EVENTS, 1000):
            sent = server.send(
                tenants[marker].ingest_key, "app", _events(marker, now)[start : start + 1000]
            )
            assert sent.status_code == 202
    (mark_a, mark_b) = tenants
    own = ("requestId", "userId", "message", "duration")
    absent = ("nothing1", "nothing2", "nothing3", "nothing4")
    work = []
    for i in range(RUNS):
        marker = (mark_a, mark_b)[i % 2]
        shapes = _shapes(own if (i // 2) % 2 else absent)
        work.append((marker, shapes[(i // 4) % len(shapes)]))

    def run(item: tuple[str, dict[str, Any]]) -> tuple[str, str, bytes]:
        marker, query = item
        r = web.post(
            f"{server.url}/v1/query_run?wait=30",
            json={"query": {**query, "limit": 10_000}, "from": now - 3_600_000 * 4, "to": now},
            headers={"Authorization": tenants[marker].admin_key},
            timeout=60,
        )
        assert r.status_code == 200, r.text
        return marker, r.json()["query_run"]["status"], r.content

    outcomes: Counter[str] = Counter()
    leaks = 0
    with ThreadPoolExecutor(8) as pool:
        for marker, status, body in pool.map(run, work):
            outcomes[status] += 1
            other = mark_b if marker == mark_a else mark_a
            leaks += other.encode() in body
    print(f"isolation: {RUNS} runs, {dict(outcomes)}, answers holding the other's data: {leaks}")
    assert leaks == 0
    # Both kinds happened: failures part way, and answers to check.
    assert outcomes["FAILED"] >= RUNS // 8
    assert outcomes["COMPLETED"] >= RUNS // 2
