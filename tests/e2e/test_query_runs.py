"""Query runs against a real server: envelopes, polling, limits, failures, auth, tenants."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import web
from tests.support import LiveServer, Tenant, launch, within_one_window

HOUR = 3600 * 1000
DAY = 24 * HOUR
COUNT_BY_LEVEL = {
    "calculations": [{"operator": "COUNT"}, {"operator": "MAX", "key": "duration"}],
    "group_bys": [{"key": "level"}],
}


class Runs:
    def __init__(self, server: LiveServer, key: str) -> None:
        self.client = web.Client(base_url=server.url, headers={"Authorization": key}, timeout=30)

    def create(self, body: dict[str, Any]) -> httpx.Response:
        return self.client.post("/v1/query_run", json=body)

    def start(self, body: dict[str, Any]) -> str:
        r = self.create(body)
        assert r.status_code == 200, r.text
        return str(r.json()["query_run"]["id"])

    def get(self, run_id: str, wait: float | None = None) -> httpx.Response:
        params = {"wait": wait} if wait is not None else {}
        return self.client.get(f"/v1/query_run/{run_id}", params=params)

    def finished(self, body: dict[str, Any]) -> dict[str, Any]:
        r = self.get(self.start(body), wait=15)
        assert r.status_code == 200, r.text
        result: dict[str, Any] = r.json()
        assert result["query_run"]["status"] != "STARTED", result
        return result


@pytest.fixture(scope="module")
def tenants(server: LiveServer) -> tuple[Tenant, Tenant]:
    """Two tenants, each with events of its own, sent an hour ago."""
    mine, theirs = server.new_tenant(), server.new_tenant()
    at = int(time.time() * 1000) - HOUR
    events = [
        {"timestamp": at + i, "level": ["info", "warn", "error"][i % 3], "duration": i}
        for i in range(300)
    ]
    assert server.send(mine.ingest_key, "logs", events).status_code == 202
    assert server.send(theirs.ingest_key, "logs", events[:30]).status_code == 202
    return mine, theirs


@pytest.fixture()
def runs(server: LiveServer, tenants: tuple[Tenant, Tenant]) -> Iterator[Runs]:
    r = Runs(server, tenants[0].admin_key)
    yield r
    r.client.close()


@pytest.fixture()
def their_runs(server: LiveServer, tenants: tuple[Tenant, Tenant]) -> Iterator[Runs]:
    r = Runs(server, tenants[1].admin_key)
    yield r
    r.client.close()


def window() -> dict[str, int]:
    now = int(time.time() * 1000)
    return {"from": now - 2 * HOUR, "to": now}


def test_a_saved_query_runs_and_its_result_is_kept_for_polling(
    server: LiveServer, tenants: tuple[Tenant, Tenant], runs: Runs
) -> None:
    saved = web.post(
        f"{server.url}/v1/queries",
        json=COUNT_BY_LEVEL,
        headers={"Authorization": tenants[0].admin_key},
    ).json()["query"]["id"]
    frame = window()
    created = runs.create({"query_id": saved, **frame})
    assert created.status_code == 200
    assert set(created.json()) == {"query_run"}
    assert set(created.json()["query_run"]) == {"id", "status"}
    assert created.json()["query_run"]["status"] == "STARTED"
    run_id = created.json()["query_run"]["id"]

    # Plain polling (no wait) reaches COMPLETED quickly.
    deadline = time.monotonic() + 10
    while (body := runs.get(run_id).json())["query_run"]["status"] == "STARTED":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    run, data = body["query_run"], body["data"]
    assert run == {
        "id": run_id,
        "query_id": saved,
        "from": frame["from"],
        "to": frame["to"],
        "limit": 100,
        "offset": 0,
        "granularity": run["granularity"],
        "status": "COMPLETED",
    }
    assert run["granularity"] > 0 and (frame["to"] - frame["from"]) / run["granularity"] <= 60
    counts = {a["groups"]["level"]: a["values"]["COUNT"] for a in data["aggregates"]}
    assert counts == {"info": 100, "warn": 100, "error": 100}
    assert {a["values"]["MAX(duration)"] for a in data["aggregates"]} == {297, 298, 299}
    assert sum(p["aggregates"]["_count"] for b in data["series"] for p in b["data"]) == 300
    assert set(data["statistics"]) == {"elapsed", "rows_read", "bytes_read"}

    assert runs.get(run_id).json() == body  # kept: the same answer again


def test_a_creation_with_wait_answers_with_the_finished_run(runs: Runs) -> None:
    frame = window()
    r = runs.client.post(
        "/v1/query_run", params={"wait": 15}, json={"query": COUNT_BY_LEVEL, **frame}
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["query_run"]["status"] == "COMPLETED"
    assert {body["query_run"]["from"], body["query_run"]["to"]} == {frame["from"], frame["to"]}
    counts = {a["groups"]["level"]: a["values"]["COUNT"] for a in body["data"]["aggregates"]}
    assert counts == {"info": 100, "warn": 100, "error": 100}
    assert runs.get(body["query_run"]["id"]).json() == body  # the same run, kept for polling

    # A wait out of range is refused like any bad parameter.
    for wait in (-1, 61, "soon"):
        bad = runs.client.post(
            "/v1/query_run", params={"wait": wait}, json={"query": COUNT_BY_LEVEL, **frame}
        )
        assert bad.status_code == 400, bad.text
    for wait in ("nan", "inf"):
        bad = runs.client.post(
            "/v1/query_run", params={"wait": wait}, json={"query": COUNT_BY_LEVEL, **frame}
        )
        assert bad.status_code == 400, bad.text
        assert bad.json()["errors"] == [
            {"field": "wait", "message": "Input should be a finite number"}
        ]


def test_statistics_count_the_rows_the_engine_read(runs: Runs) -> None:
    body = runs.finished({"query": {"calculations": [{"operator": "COUNT"}]}, **window()})
    statistics = body["data"]["statistics"]
    assert statistics["rows_read"] >= 300
    assert statistics["bytes_read"] >= 300 * 8
    assert statistics["elapsed"] > 0


def test_an_inline_events_query_with_limit_and_offset(runs: Runs) -> None:
    body = runs.finished(
        {
            "query": {
                "keys": [{"key": "duration"}, {"key": "_dataset"}],
                "filters": [{"key": "level", "operation": "=", "value": "error"}],
            },
            "limit": 5,
            "offset": 2,
            **window(),
        }
    )
    assert body["query_run"]["query_id"] is None
    assert (body["query_run"]["limit"], body["query_run"]["offset"]) == (5, 2)
    data = body["data"]
    assert data["count"] == 100
    # newest first: durations 299, 296, ... are the errors; skip two
    assert data["events"] == [
        {"duration": d, "_dataset": "logs"} for d in (293, 290, 287, 284, 281)
    ]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"from": 2_000, "to": 1_000}, "from"),
        ({"from": 0, "to": 31 * DAY}, "to"),
        ({"from": None}, "from"),
        ({"to": "soon"}, "to"),
        ({"from": True}, "from"),  # not the millisecond 1
        ({"limit": True}, "limit"),
        ({"limit": 0}, "limit"),
        ({"offset": -1}, "offset"),
        ({"granularity": 0}, "granularity"),
        # Beyond 64 bits (2**63 made a 500) and beyond any date: refused by name.
        ({"from": 2**63, "to": 2**63 + 1}, "from"),
        ({"to": 2**63}, "to"),
        ({"from": -1}, "from"),
        ({"granularity": 2**63}, "granularity"),
        ({"granularity": 2**64 + 1}, "granularity"),
        ({"offset": 2**63}, "offset"),
        ({"colour": "red"}, "colour"),
        ({"query": {"calculations": [{"operator": "MODE"}]}}, "query.calculations[0].operator"),
        ({"query_id": "abc"}, "query_id"),  # both query and query_id
        ({"query": None}, "query_id"),  # neither
    ],
)
def test_bad_runs_are_refused_naming_the_field(
    runs: Runs, change: dict[str, Any], field: str
) -> None:
    body: dict[str, Any] = {"query": {"calculations": [{"operator": "COUNT"}]}, **window()}
    body.update(change)
    body = {k: v for k, v in body.items() if v is not None}
    r = runs.create(body)
    assert r.status_code == 400, r.text
    assert field in [e["field"] for e in r.json()["errors"]], r.json()


def test_a_query_longer_than_the_engine_parses_is_refused_naming_the_limit(runs: Runs) -> None:
    """It used to be a FAILED run with the engine's SYNTAX_ERROR."""
    values = [f"service-{i}" for i in range(20_000)]
    query = {"filters": [{"key": "level", "operation": "IN", "value": values}]}
    r = runs.create({"query": query, **window()})
    assert r.status_code == 400, r.text
    assert "the engine reads at most 262,144" in r.json()["reason"]
    too_many = {"filters": [{"key": "level", "operation": "EXISTS"}] * 101}
    r = runs.create({"query": too_many, **window()})
    assert r.status_code == 400, r.text
    assert r.json()["errors"] == [
        {"field": "query.filters", "message": "at most 100 items; 101 given"}
    ]


def test_thirty_days_is_allowed(runs: Runs) -> None:
    now = int(time.time() * 1000)
    body = runs.finished(
        {"query": {"calculations": [{"operator": "COUNT"}]}, "from": now - 30 * DAY, "to": now}
    )
    assert body["data"]["aggregates"][0]["values"]["COUNT"] == 300


def test_an_engine_failure_is_a_failed_run_with_a_reason(runs: Runs) -> None:
    body = runs.finished(
        {
            "query": {
                "filters": [{"key": "level", "operation": "MATCH_REGEX", "value": "(unclosed"}]
            },
            **window(),
        }
    )
    assert body["query_run"]["status"] == "FAILED"
    assert body["query_run"]["error"] == (
        "the regular expression in filters[0].value is not valid RE2 syntax"
    )
    assert body["data"] is None


@pytest.mark.parametrize("operation", ["LIKE", "NOT_LIKE"])
def test_a_like_pattern_ending_in_a_backslash_is_refused_naming_the_filter(
    runs: Runs, operation: str
) -> None:
    """It used to be a FAILED run quoting the engine's plan, the tenant filter included."""
    query = {"filters": [{"key": "level", "operation": operation, "value": "\\"}]}
    r = runs.create({"query": query, **window()})
    assert r.status_code == 400, r.text
    assert r.json()["errors"] == [
        {
            "field": "query.filters[0].value",
            "message": "a LIKE pattern cannot end in a lone backslash: a backslash escapes the"
            " character after it (\\%, \\_); write \\\\ for a backslash",
        }
    ]


def test_a_key_holding_an_object_exists_when_the_object_holds_a_value(
    server: LiveServer,
) -> None:
    """EXISTS on `error` used to miss every event whose error was an object."""
    tenant = server.new_tenant()
    at = int(time.time() * 1000) - HOUR
    errors: list[Any] = [
        {"message": "boom", "stack": "at x"},
        {"message": "bang"},
        "plain text",
        [],
        {},  # nothing inside: missing
        {"message": None},  # only a null inside: missing
        None,
    ]
    events = [{"timestamp": at + i, "n": i, "error": e} for i, e in enumerate(errors)]
    assert server.send(tenant.ingest_key, "logs", [*events, {"n": 7}]).status_code == 202
    runs = Runs(server, tenant.admin_key)

    def matching(query: dict[str, Any]) -> Any:
        body = runs.finished({"query": query, **window()})
        assert body["query_run"]["status"] == "COMPLETED", body
        return body["data"]

    exists = matching({"filters": [{"key": "error", "operation": "EXISTS"}]})
    assert sorted(e["n"] for e in exists["events"]) == [0, 1, 2, 3]
    missing = matching({"filters": [{"key": "error", "operation": "DOES_NOT_EXIST"}]})
    assert sorted(e["n"] for e in missing["events"]) == [4, 5, 6, 7]
    counted = matching({"calculations": [{"operator": "COUNT", "key": "error"}]})
    assert counted["aggregates"][0]["values"]["COUNT(error)"] == 4
    other = matching({"filters": [{"key": "error", "operation": "!=", "value": "plain text"}]})
    assert sorted(e["n"] for e in other["events"]) == [0, 1, 3]
    runs.client.close()


def test_runs_and_queries_of_another_tenant_are_not_found(
    runs: Runs, their_runs: Runs, server: LiveServer, tenants: tuple[Tenant, Tenant]
) -> None:
    run_id = runs.start({"query": COUNT_BY_LEVEL, **window()})
    assert runs.get(run_id, wait=5).status_code == 200
    for r in (their_runs.get(run_id), their_runs.get(run_id, wait=1), their_runs.get("nope")):
        assert r.status_code == 404
        assert r.json() == {"message": "Not Found"}

    saved = web.post(
        f"{server.url}/v1/queries", json={}, headers={"Authorization": tenants[0].admin_key}
    ).json()["query"]["id"]
    r = their_runs.create({"query_id": saved, **window()})
    assert r.status_code == 404

    # Their own run counts only their own events.
    theirs = their_runs.finished({"query": {"calculations": [{"operator": "COUNT"}]}, **window()})
    assert theirs["data"]["aggregates"][0]["values"]["COUNT"] == 30


def test_runs_need_an_admin_key(server: LiveServer, tenants: tuple[Tenant, Tenant]) -> None:
    body = {"query": {}, **window()}
    url = f"{server.url}/v1/query_run"
    r = web.post(url, json=body)
    assert (r.status_code, r.json()["message"]) == (401, "Unauthorised")
    r = web.post(url, json=body, headers={"Authorization": tenants[0].ingest_key})
    assert (r.status_code, r.json()["message"]) == (403, "Forbidden")
    assert web.get(f"{url}/x", headers={"x-api-key": "ll_sk_unknown"}).status_code == 401


# ---------------------------------------------------------------- limits (servers of their own)


@pytest.fixture(scope="module")
def strict_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """Tiny limits: 3 run creations a minute, 1 ms of run time."""
    srv = launch(
        Path(tmp_path_factory.mktemp("strict")),
        {"LIMELIGHT_QUERY_RUNS_PER_MINUTE": "3", "LIMELIGHT_QUERY_MAX_RUN_SECONDS": "0.001"},
    )
    yield srv
    srv.stop()


def test_a_run_over_its_time_limit_fails_and_creations_are_rate_limited(
    strict_server: LiveServer,
) -> None:
    mine, theirs = strict_server.new_tenant(), strict_server.new_tenant()
    runs = Runs(strict_server, mine.admin_key)
    body = {"query": {"calculations": [{"operator": "COUNT"}]}, **window()}
    within_one_window(15)
    for _ in range(3):
        done = runs.finished(body)
        assert done["query_run"]["status"] == "FAILED"
        assert "longer than its limit of 0.001 s" in done["query_run"]["error"]
        assert done["data"] is None

    refused = runs.create(body)
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) >= 1
    # The limit is per workspace: another one still runs queries.
    assert Runs(strict_server, theirs.admin_key).create(body).status_code == 200


@pytest.fixture(scope="module")
def small_result_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    srv = launch(
        Path(tmp_path_factory.mktemp("small")), {"LIMELIGHT_QUERY_MAX_RESULT_BYTES": "4000"}
    )
    yield srv
    srv.stop()


def test_a_result_over_the_size_limit_fails(small_result_server: LiveServer) -> None:
    tenant = small_result_server.new_tenant()
    at = int(time.time() * 1000) - HOUR
    events = [{"timestamp": at + i, "message": "x" * 100, "n": i} for i in range(100)]
    assert small_result_server.send(tenant.ingest_key, "logs", events).status_code == 202
    runs = Runs(small_result_server, tenant.admin_key)

    small = runs.finished({"query": {}, "limit": 5, **window()})
    assert small["query_run"]["status"] == "COMPLETED"
    assert small["data"]["count"] == 100

    big = runs.finished({"query": {}, "limit": 100, **window()})
    assert big["query_run"]["status"] == "FAILED"
    assert "larger than the limit of 4000 bytes" in big["query_run"]["error"]
