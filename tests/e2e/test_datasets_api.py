"""The Datasets API against a real server: counts over a timeframe, keys with kinds, auth."""

from __future__ import annotations

import time
from typing import Any

import httpx
import orjson

from tests import web
from tests.support import LiveServer, Tenant

HOUR = 3_600_000
# The test servers keep events ten years (tests.support.launch), unless a dataset says.
DEFAULT = {"retention": "3650d", "retention_is_default": True}


def get(server: LiveServer, key: str | None, path: str, **params: Any) -> httpx.Response:
    headers = {"Authorization": key} if key else {}
    return web.get(f"{server.url}{path}", params=params, headers=headers, timeout=30)


def put_retention(server: LiveServer, key: str | None, dataset: str, body: Any) -> httpx.Response:
    headers = {"Authorization": key} if key else {}
    content = body if isinstance(body, bytes) else orjson.dumps(body)
    url = f"{server.url}/v1/datasets/{dataset}/retention"
    return web.put(url, content=content, headers=headers, timeout=30)


def test_datasets_are_listed_with_their_counts_and_last_event_over_the_timeframe(
    server: LiveServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    now = int(time.time() * 1000)
    old = now - 30 * HOUR  # before the default timeframe of 24 hours
    sent = server.send(
        tenant.ingest_key,
        "checkout",
        [
            {"timestamp": now - 2 * HOUR, "message": "a"},
            {"timestamp": now - HOUR, "message": "b"},
            {"timestamp": old, "message": "old"},
        ],
    )
    assert sent.status_code == 202
    assert (
        server.send(tenant.ingest_key, "audit", [{"timestamp": old, "who": "ann"}]).status_code
        == 202
    )
    assert server.send(other_tenant.ingest_key, "theirs", [{"x": 1}]).status_code == 202

    answer = get(server, tenant.admin_key, "/v1/datasets")
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "datasets": [{"name": "checkout", "count": 2, "last_event_at": now - HOUR, **DEFAULT}]
    }

    wider = get(server, tenant.admin_key, "/v1/datasets", **{"from": old, "to": now})
    assert wider.json() == {
        "datasets": [
            {"name": "audit", "count": 1, "last_event_at": old, **DEFAULT},
            {"name": "checkout", "count": 3, "last_event_at": now - HOUR, **DEFAULT},
        ]
    }


def test_a_datasets_keys_have_the_kinds_of_the_query_semantics(
    server: LiveServer, tenant: Tenant
) -> None:
    events = [
        {
            "message": "paid",
            "duration": 12,
            "ok": True,
            "http": {"status": 200, "route": "/pay"},
            "tags": ["a", "b"],
            "http.method": "POST",
        },
        {"message": "retry", "duration": 3.5, "http": {"status": "timeout"}, "mixed": [1, "x"]},
    ]
    assert server.send(tenant.ingest_key, "payments", events).status_code == 202
    assert server.send(tenant.ingest_key, "other", [{"only_here": 1}]).status_code == 202

    answer = get(server, tenant.admin_key, "/v1/datasets/payments/keys")
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "keys": [
            {"key": "_timestamp", "types": ["number"]},
            {"key": "_dataset", "types": ["string"]},
            {"key": "_service", "types": ["string"]},
            {"key": "_namespace", "types": ["string"]},
            {"key": "_id", "types": ["string"]},
            {"key": "duration", "types": ["number"]},
            {"key": "http.method", "types": ["string"]},
            {"key": "http.route", "types": ["string"]},
            {"key": "http.status", "types": ["string", "number"]},
            {"key": "message", "types": ["string"]},
            {"key": "mixed", "types": ["array"]},
            {"key": "ok", "types": ["boolean"]},
            {"key": "tags", "types": ["array"]},
        ]
    }


def test_the_datasets_api_answers_as_the_queries_api_does(
    server: LiveServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    assert server.send(other_tenant.ingest_key, "private", [{"x": 1}]).status_code == 202

    assert get(server, None, "/v1/datasets").status_code == 401
    assert get(server, "ll_sk_" + "0" * 43, "/v1/datasets").status_code == 401
    refused = get(server, tenant.ingest_key, "/v1/datasets")
    assert refused.status_code == 403
    assert "admin key" in refused.json()["reason"]
    assert get(server, tenant.ingest_key, "/v1/datasets/private/keys").status_code == 403

    reversed_frame = get(server, tenant.admin_key, "/v1/datasets", **{"from": 10, "to": 5})
    assert reversed_frame.status_code == 400
    assert reversed_frame.json()["errors"] == [
        {"field": "from", "message": "must not be after 'to'"}
    ]
    too_long = get(server, tenant.admin_key, "/v1/datasets", **{"from": 0, "to": 40 * 24 * HOUR})
    assert too_long.status_code == 400
    assert too_long.json()["errors"][0]["field"] == "to"
    not_a_number = get(server, tenant.admin_key, "/v1/datasets", **{"from": "yesterday"})
    assert not_a_number.status_code == 400
    assert not_a_number.json()["errors"][0]["field"] == "from"

    # Another environment's dataset is as unknown as one that never was.
    for name in ("private", "never-sent"):
        missing = get(server, tenant.admin_key, f"/v1/datasets/{name}/keys")
        assert missing.status_code == 404
        assert missing.json()["message"] == "Not Found"
    bad = get(server, tenant.admin_key, "/v1/datasets/no%20spaces/keys")
    assert bad.status_code == 400
    assert "invalid dataset name" in bad.json()["reason"]


def test_a_dataset_keeps_its_events_for_the_retention_its_environment_gives_it(
    server: LiveServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    for who in (tenant, other_tenant):
        assert server.send(who.ingest_key, "debug", [{"x": 1}]).status_code == 202

    changed = put_retention(server, tenant.admin_key, "debug", {"retention": "7d"})
    assert changed.status_code == 200, changed.text
    own = {"name": "debug", "retention": "7d", "retention_is_default": False}
    assert changed.json() == {"dataset": own}
    [listed] = get(server, tenant.admin_key, "/v1/datasets").json()["datasets"]
    assert listed["retention"] == "7d" and listed["retention_is_default"] is False
    # The other environment's dataset of the same name keeps the default.
    [theirs] = get(server, other_tenant.admin_key, "/v1/datasets").json()["datasets"]
    assert theirs == {**theirs, **DEFAULT}

    back = put_retention(server, tenant.admin_key, "debug", {"retention": "default"})
    assert back.json() == {"dataset": {"name": "debug", **DEFAULT}}

    assert put_retention(server, None, "debug", {"retention": "1d"}).status_code == 401
    assert put_retention(server, tenant.ingest_key, "debug", {"retention": "1d"}).status_code == 403
    for body, field in [
        ({"retention": "a week"}, "retention"),
        ({"retention": "10m"}, "retention"),
        ({"retention": 7}, "retention"),
        ({}, "retention"),
    ]:
        bad = put_retention(server, tenant.admin_key, "debug", body)
        assert bad.status_code == 400, body
        assert bad.json()["errors"][0]["field"] == field
    not_json = put_retention(server, tenant.admin_key, "debug", b"{7d")
    assert not_json.status_code == 400
    assert "not valid JSON" in not_json.json()["reason"]
    bad_name = put_retention(server, tenant.admin_key, "no%20spaces", {"retention": "1d"})
    assert bad_name.status_code == 400
    [still] = get(server, tenant.admin_key, "/v1/datasets").json()["datasets"]
    assert still["retention_is_default"] is True
