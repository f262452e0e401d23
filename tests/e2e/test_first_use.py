"""What a first-time user trips over, answered so that the answer says what to change."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from tests import web
from tests.support import LiveServer, Tenant, run_cli

HOUR = 3_600_000
SECONDS_NOW = 1_764_000_000  # 2025-11-24 in seconds: 1970-01-21 read as milliseconds


def get(server: LiveServer, key: str, path: str, **params: Any) -> httpx.Response:
    return web.get(f"{server.url}{path}", params=params, headers={"Authorization": key}, timeout=30)


def run(server: LiveServer, key: str, body: dict[str, Any]) -> httpx.Response:
    return web.post(
        f"{server.url}/v1/query_run",
        json=body,
        params={"wait": 15},
        headers={"Authorization": key},
        timeout=30,
    )


def assert_seconds_refused(answer: httpx.Response, fields: list[str]) -> None:
    assert answer.status_code == 400, answer.text
    errors = answer.json()["errors"]
    assert [e["field"] for e in errors] == fields
    for error in errors:
        assert "unix milliseconds" in error["message"]
        assert "not seconds" in error["message"]


@pytest.mark.parametrize(
    "path", ["/v1/query_run", "/v1/events", "/v1/datasets"], ids=lambda p: p.strip("/")
)
def test_a_timeframe_in_seconds_is_refused_with_the_hint_of_milliseconds(
    server: LiveServer, tenant: Tenant, path: str
) -> None:
    frame = {"from": SECONDS_NOW - 3600, "to": SECONDS_NOW}
    if path == "/v1/query_run":
        body = {"query": {"calculations": [{"operator": "COUNT"}]}, **frame}
        assert_seconds_refused(run(server, tenant.admin_key, body), ["from", "to"])
    else:
        assert_seconds_refused(get(server, tenant.admin_key, path, **frame), ["from", "to"])
        # One end alone, in seconds, says which.
        alone = get(server, tenant.admin_key, path, to=SECONDS_NOW)
        assert_seconds_refused(alone, ["to"])


def test_the_newest_events_over_a_timeframe_in_milliseconds(
    server: LiveServer, tenant: Tenant
) -> None:
    now = int(time.time() * 1000)
    events = [{"timestamp": now - h * HOUR, "hours_ago": h} for h in (1, 3, 5)]
    assert server.send(tenant.ingest_key, "logs", events).status_code == 202

    frame = {"from": now - 4 * HOUR, "to": now - 2 * HOUR}
    found = get(server, tenant.admin_key, "/v1/events", **frame)
    assert found.status_code == 200, found.text
    assert [e["hours_ago"] for e in found.json()["events"]] == [3]
    everything = get(server, tenant.admin_key, "/v1/events")
    assert [e["hours_ago"] for e in everything.json()["events"]] == [1, 3, 5]
    backwards = get(server, tenant.admin_key, "/v1/events", **{"from": now, "to": now - HOUR})
    assert backwards.status_code == 400
    assert backwards.json()["errors"] == [{"field": "from", "message": "must not be after 'to'"}]


def test_a_run_over_a_dataset_never_held_says_so_beside_its_empty_result(
    server: LiveServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    now = int(time.time() * 1000)
    for dataset in ("logs", "otel"):
        sent = server.send(tenant.ingest_key, dataset, [{"timestamp": now - HOUR, "n": 1}])
        assert sent.status_code == 202
    # Another environment's dataset is as unknown here as a typo, and never named.
    assert server.send(other_tenant.ingest_key, "secret", [{"n": 1}]).status_code == 202
    frame = {"from": now - 2 * HOUR, "to": now}

    def answer(datasets: list[str], query: dict[str, Any]) -> dict[str, Any]:
        namespaces = [{"type": "dataset", "value": d} for d in datasets]
        body = {"query": {"namespaces": namespaces, **query}, **frame}
        r = run(server, tenant.admin_key, body)
        assert r.status_code == 200, r.text
        result: dict[str, Any] = r.json()
        assert result["query_run"]["status"] == "COMPLETED", result
        return result

    events = answer(["logz"], {})
    assert events["data"]["events"] == []
    assert events["data"]["count"] == 0
    assert events["data"]["warnings"] == ["no dataset 'logz' here; known: logs, otel"]
    counted = answer(["secret"], {"calculations": [{"operator": "COUNT"}]})
    assert counted["data"]["aggregates"][0]["values"]["COUNT"] == 0
    assert counted["data"]["warnings"] == ["no dataset 'secret' here; known: logs, otel"]
    # Polled again later (from memory or the record), the warning stays.
    polled = get(server, tenant.admin_key, f"/v1/query_run/{events['query_run']['id']}")
    assert polled.json()["data"]["warnings"] == events["data"]["warnings"]
    # A dataset held, even with nothing in the timeframe: no warnings at all.
    assert "warnings" not in answer(["logs"], {})["data"]
    frame.update({"from": now - 4 * HOUR, "to": now - 3 * HOUR})
    assert answer(["logs"], {})["data"]["events"] == []
    assert "warnings" not in answer(["logs"], {})["data"]
    assert "warnings" not in answer([], {})["data"]
    # An environment without any events yet.
    fresh = server.new_tenant()
    body = {"query": {"namespaces": [{"type": "dataset", "value": "logs"}]}, **frame}
    empty = run(server, fresh.admin_key, body).json()
    assert empty["data"]["warnings"] == [
        "no dataset 'logs' here; this environment has no events yet"
    ]


def test_a_refused_key_says_whether_it_is_missing_unknown_or_revoked(
    server: LiveServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    made = server.cli_json(
        "keys", "create", "--kind", "admin", "--workspace", tenant.workspace_id,
        "--environment", tenant.environment_id,
    )  # fmt: skip
    server.cli("keys", "revoke", made["id"])
    theirs = other_tenant.admin_key
    cases = {
        "no API key: send one in the Authorization (or x-api-key) header": [None, ""],
        "not an API key: API keys begin with ll_pk_ (ingest) or ll_sk_ (admin)": [
            "nonsense",
            "ll_at_" + "A" * 43,  # an OAuth access token is never an API key
            "ll_sk_" + "A" * 200,
        ],
        # Another tenant's key with one character changed is as unknown as any guess.
        "unknown API key": ["ll_sk_" + "A" * 43, theirs[:-1] + ("B" if theirs[-1] != "B" else "C")],
        "this API key has been revoked": [made["key"]],
    }
    for reason, keys in cases.items():
        for value in keys:
            headers = {} if value is None else {"Authorization": value}
            for answer in (
                web.get(f"{server.url}/v1/queries", headers=headers, timeout=30),
                web.post(
                    f"{server.events_url}/v1/logs",
                    content=b"[{}]",
                    headers={} if value is None else {"x-api-key": value},
                    timeout=30,
                ),
            ):
                assert answer.status_code == 401, (value, answer.text)
                assert answer.json() == {"message": "Unauthorised", "reason": reason}, value
    # The tenant's other keys still work.
    assert get(server, tenant.admin_key, "/v1/queries").status_code == 200


def test_the_retention_of_a_dataset_the_environment_never_held_needs_create(
    server: LiveServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    assert server.send(tenant.ingest_key, "logs", [{"n": 1}]).status_code == 202
    assert server.send(other_tenant.ingest_key, "logz", [{"n": 1}]).status_code == 202
    ws = ["--workspace", tenant.workspace_id]

    def retention(*args: str) -> Any:
        return run_cli(["datasets", "retention", "prod", *args, *ws], server.env)

    # Another environment's dataset of that name does not count.
    refused = retention("logz", "7d")
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines()[-1] == (
        "error: environment 'prod' has no dataset 'logz' (known: logs); check the name,"
        " or add --create to set the retention of a dataset to come"
    )
    listed = json.loads(run_cli(["datasets", "list", "prod", *ws, "--json"], server.env).stdout)
    assert listed["datasets"] == []
    assert retention("logs", "7d").returncode == 0
    created = retention("logz", "1d", "--create", "--json")
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["retention"] == "1d"
    # The server's answer to the CLI is the operator's alone: no key of a tenant opens it.
    params = {"workspace_id": tenant.workspace_id, "environment_id": tenant.environment_id}
    for headers in ({}, {"Authorization": tenant.admin_key}, {"Authorization": "Bearer x"}):
        asked = web.get(f"{server.url}/operator/datasets", params=params, headers=headers)
        assert asked.status_code == 404
