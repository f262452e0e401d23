"""Limits that keep one request from costing the server without bound."""

from __future__ import annotations

from tests import web
from tests.support import LiveServer, Tenant


def test_oauth_token_refuses_a_large_body_without_buffering_it(server: LiveServer) -> None:
    r = web.post(
        f"{server.url}/oauth/token",
        content=b"{" + b" " * 200_000 + b"}",
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 413
    assert r.json()["error"] == "invalid_request"
    assert r.headers["cache-control"] == "no-store"


def test_a_batch_over_the_event_count_limit_is_refused(server: LiveServer, tenant: Tenant) -> None:
    body = b"[" + b",".join([b"{}"] * 100_001) + b"]"
    r = web.post(
        f"{server.events_url}/v1/limits",
        content=body,
        headers={"x-api-key": tenant.ingest_key},
        timeout=60,
    )
    assert r.status_code == 400
    assert "at most 100000" in r.json()["reason"]


def test_many_invalid_elements_are_counted_not_all_echoed(
    server: LiveServer, tenant: Tenant
) -> None:
    r = server.send(tenant.ingest_key, "limits", [{"ok": 1}, *range(5000)])
    assert r.status_code == 400
    body = r.json()
    assert len(body["invalid"]) == 1000
    first = {"index": 1, "reason": "the event is not a JSON object", "event": 0}
    assert body["invalid"][0] == first
    assert body["invalidCount"] == 5000
    stored = web.get(
        f"{server.url}/v1/events",
        params={"dataset": "limits"},
        headers={"Authorization": tenant.admin_key},
    ).json()["events"]
    assert [e["ok"] for e in stored] == [1]


def test_the_login_form_is_read_within_a_small_bound(server: LiveServer) -> None:
    r = web.post(
        f"{server.url}/login",
        content=b"email=a%40b.c&password=" + b"x" * 200_000,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert r.status_code == 413
