"""The README's first example: send an event, read it back."""

from __future__ import annotations

from tests import web
from tests.support import LiveServer, Tenant


def test_send_and_read_back(server: LiveServer, tenant: Tenant) -> None:
    event = {"message": "hello", "http.method": "GET", "data": {"userId": 7}}
    r = server.send(tenant.ingest_key, "logs", [event], {"x-service": "api"})
    assert r.status_code == 202
    assert r.json() == {"message": "Request Accepted"}

    got = web.get(
        f"{server.url}/v1/events",
        params={"dataset": "logs"},
        headers={"Authorization": tenant.admin_key},
    ).json()["events"]
    assert len(got) == 1
    stored = got[0]
    assert {k: stored[k] for k in event} == event
    assert stored["_service"] == "api"
    assert stored["_namespace"] == "default"
    assert stored["_dataset"] == "logs"
