"""``managed_id`` on creation and ``GET /v1/managed``: what ``limelight apply`` made is
found again by the id its folder gives it, in its own environment only."""

from __future__ import annotations

import json

import httpx
from jsonschema import Draft202012Validator

from tests import web
from tests.support import LiveServer, Tenant

QUERY = {"name": "latency", "calculations": [{"operator": "P99", "key": "duration"}]}


def managed(server: LiveServer, key: str) -> list[dict[str, str]]:
    r = web.get(f"{server.url}/v1/managed", headers={"Authorization": key})
    assert r.status_code == 200, r.text
    found: list[dict[str, str]] = r.json()["managed"]
    return found


def create(
    server: LiveServer, key: str, path: str, body: object, managed_id: str
) -> httpx.Response:
    return web.post(
        f"{server.url}{path}",
        params={"managed_id": managed_id},
        json=body,
        headers={"Authorization": key},
    )


def count(server: LiveServer, key: str, kind: str) -> int:
    r = web.get(f"{server.url}/v1/{kind}", headers={"Authorization": key})
    return len(r.json()[kind])


def test_a_query_an_alert_and_a_board_created_with_a_managed_id_are_listed_under_it(
    server: LiveServer, tenant: Tenant
) -> None:
    key = tenant.admin_key
    query_id = create(server, key, "/v1/queries", QUERY, "latency").json()["query"]["id"]
    alert = {"name": "slow", "query_id": query_id, "threshold": {"operation": ">", "value": 1}}
    alert_id = create(server, key, "/v1/alerts", alert, "slow").json()["alert"]["id"]
    board = {"name": "latency", "panels": [{"query_id": query_id}]}
    board_id = create(server, key, "/v1/boards", board, "latency").json()["board"]["id"]
    assert managed(server, key) == [
        {"type": "alert", "managed_id": "slow", "id": alert_id},
        {"type": "board", "managed_id": "latency", "id": board_id},
        {"type": "query", "managed_id": "latency", "id": query_id},
    ]
    web.request("DELETE", f"{server.url}/v1/boards/{board_id}", headers={"Authorization": key})
    # Deleted by the API: no longer managed (its id is free again).
    web.request("DELETE", f"{server.url}/v1/alerts/{alert_id}", headers={"Authorization": key})
    assert managed(server, key) == [{"type": "query", "managed_id": "latency", "id": query_id}]


def test_a_managed_id_taken_is_a_409_and_nothing_is_created(
    server: LiveServer, tenant: Tenant
) -> None:
    key = tenant.admin_key
    first = create(server, key, "/v1/queries", QUERY, "latency").json()["query"]["id"]
    again = create(server, key, "/v1/queries", QUERY, "latency")
    assert again.status_code == 409
    assert first in again.json()["reason"]
    assert count(server, key, "queries") == 1


def test_a_bad_managed_id_is_a_400_naming_it_and_nothing_is_created(
    server: LiveServer, tenant: Tenant
) -> None:
    key = tenant.admin_key
    for bad in ("", "a b", "x" * 129, "../etc"):
        r = create(server, key, "/v1/queries", QUERY, bad)
        assert r.status_code == 400, bad
        assert r.json()["errors"][0]["field"] == "managed_id"
    assert count(server, key, "queries") == 0


def test_another_environment_sees_nothing_and_may_use_the_same_id(
    server: LiveServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    create(server, tenant.admin_key, "/v1/queries", QUERY, "latency")
    assert managed(server, other_tenant.admin_key) == []
    theirs = create(server, other_tenant.admin_key, "/v1/queries", QUERY, "latency")
    assert theirs.status_code == 200
    assert [m["id"] for m in managed(server, other_tenant.admin_key)] == [
        theirs.json()["query"]["id"]
    ]


def test_the_managed_list_needs_an_admin_key(server: LiveServer, tenant: Tenant) -> None:
    assert web.get(f"{server.url}/v1/managed").status_code == 401
    ingest = web.get(f"{server.url}/v1/managed", headers={"Authorization": tenant.ingest_key})
    assert ingest.status_code == 403


def test_the_resources_schema_is_served_without_a_key_and_is_a_json_schema(
    server: LiveServer,
) -> None:
    r = web.get(f"{server.url}/schemas/limelight-resources.json")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/schema+json")
    Draft202012Validator.check_schema(json.loads(r.content))
