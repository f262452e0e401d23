"""The Queries API against a real server: envelopes, validation, partial updates, auth, tenants."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from limelight.auth.api_keys import mint_key
from limelight.store.events.base import Tenant as StoreTenant
from limelight.store.meta import queries_repo, repos
from limelight.store.meta.db import MetaDB
from tests import web
from tests.support import LiveServer, Tenant

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")

FULL = {
    "name": "Slow checkouts",
    "description": "p99 latency of checkout by route",
    "namespaces": [{"type": "dataset", "value": "logs"}, {"type": "lambda", "value": "fn-1"}],
    "calculations": [
        {"operator": "COUNT"},
        {"operator": "P99", "key": "duration", "alias": "p99"},
        {"operator": "MAX", "key": "duration"},
    ],
    "filters": [
        {"key": "duration", "operation": ">", "value": 100},
        {"key": "http.method", "operation": "IN", "value": ["GET", "POST"]},
        {"key": "error", "operation": "DOES_NOT_EXIST"},
        {"key": "latency", "operation": ">=", "value": {"key": "budget", "type": "number"}},
    ],
    "filter_combination": "AND",
    "group_bys": [{"key": "data.route", "type": "string"}],
    "orders": [{"key": "p99", "type": "number", "order": "DESCENDING"}],
}


class Api:
    """The Queries API of one server with one key."""

    def __init__(self, server: LiveServer, key: str | None) -> None:
        headers = {"Authorization": key} if key else {}
        self.client = web.Client(base_url=server.url, headers=headers, timeout=30)

    def create(self, body: Any) -> httpx.Response:
        return self.client.post("/v1/queries", json=body)

    def create_id(self, body: Any) -> str:
        r = self.create(body)
        assert r.status_code == 200, r.text
        return str(r.json()["query"]["id"])

    def get(self, query_id: str) -> httpx.Response:
        return self.client.get(f"/v1/queries/{query_id}")

    def put(self, query_id: str, body: Any) -> httpx.Response:
        return self.client.put(f"/v1/queries/{query_id}", json=body)

    def delete(self, query_id: str) -> httpx.Response:
        return self.client.delete(f"/v1/queries/{query_id}")

    def list(self, path: str = "/v1/queries") -> list[dict[str, Any]]:
        r = self.client.get(path)
        assert r.status_code == 200, r.text
        queries: list[dict[str, Any]] = r.json()["queries"]
        return queries


@pytest.fixture(scope="module")
def mine(server: LiveServer) -> Tenant:
    """The tenant most tests act as (one per module: tenants are made by the CLI, slowly)."""
    return server.new_tenant()


@pytest.fixture(scope="module")
def theirs(server: LiveServer) -> Tenant:
    return server.new_tenant()


@pytest.fixture()
def api(server: LiveServer, mine: Tenant) -> Iterator[Api]:
    a = Api(server, mine.admin_key)
    yield a
    a.client.close()


@pytest.fixture()
def other_api(server: LiveServer, theirs: Tenant) -> Iterator[Api]:
    a = Api(server, theirs.admin_key)
    yield a
    a.client.close()


@pytest.fixture()
def meta(server: LiveServer) -> MetaDB:
    """The server's own metadata database, for what the API cannot do: users."""
    return server.meta


def fields_of(query: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in query.items() if k not in ("id", "created_at", "updated_at", "author")}


def test_create_then_get_returns_every_field_and_the_service_fields(api: Api, mine: Tenant) -> None:
    r = api.create(FULL)
    assert r.status_code == 200
    assert list(r.json()) == ["query"] and list(r.json()["query"]) == ["id"]
    query_id = r.json()["query"]["id"]

    got = api.get(query_id)
    assert got.status_code == 200
    query = got.json()["query"]
    assert fields_of(query) == FULL
    assert query["id"] == query_id
    assert ISO_UTC.match(query["created_at"]) and query["updated_at"] == query["created_at"]
    # A key made by `limelight keys create` acts for a user: the workspace's first member
    # (here the operator's account, which the CLI made a member of the new workspace).
    assert query["author"] == mine.owner_id != ""


def test_every_field_may_be_omitted_and_service_fields_are_ignored(api: Api) -> None:
    empty = api.create_id({})
    assert fields_of(api.get(empty).json()["query"]) == {}

    sent = {"id": "mine", "author": "someone", "created_at": "2000-01-01T00:00:00Z", "name": "n"}
    query_id = api.create_id(sent)
    query = api.get(query_id).json()["query"]
    assert query_id != "mine"
    assert query["author"] not in ("someone", None)
    assert query["created_at"] != "2000-01-01T00:00:00Z"
    assert fields_of(query) == {"name": "n"}


def test_author_is_the_user_who_owns_the_key(
    server: LiveServer, mine: Tenant, meta: MetaDB
) -> None:
    with meta.session(immediate=True) as s:
        env = repos.find_environment(s, mine.environment_id)
        key = mint_key(s, env, "admin", user_id="user-42").value
    own = Api(server, key)
    query_id = own.create_id({"name": "mine"})
    assert own.get(query_id).json()["query"]["author"] == "user-42"
    # Another key of the same environment sees it, with its author.
    assert Api(server, mine.admin_key).get(query_id).json()["query"]["author"] == "user-42"


def test_a_key_without_an_owner_is_named_as_the_author(
    server: LiveServer, mine: Tenant, meta: MetaDB
) -> None:
    # Keys made before every admin key had an owner, in a workspace without members.
    with meta.session(immediate=True) as s:
        env = repos.find_environment(s, mine.environment_id)
        new = mint_key(s, env, "admin")
    query_id = Api(server, new.value).create_id({"name": "ownerless"})
    assert Api(server, mine.admin_key).get(query_id).json()["query"]["author"] == new.key.id


@pytest.mark.parametrize(
    ("body", "field", "hint"),
    [
        ({"colour": "red"}, "colour", "unknown field"),
        (
            {"calculations": [{"operator": "COUNT"}], "keys": [{"key": "message"}]},
            "calculations",
            "keys",
        ),
        ({"calculations": [{"operator": "MODE", "key": "x"}]}, "calculations[0].operator", "P99"),
        ({"calculations": [{"operator": "SUM"}]}, "calculations[0].key", "key"),
        ({"filters": [{"key": "a", "operation": "~", "value": 1}]}, "filters[0].operation", "LIKE"),
        ({"filters": [{"key": "a", "operation": "IN"}]}, "filters[0].value", "IN"),
        ({"filters": [{"key": "a", "operation": "=", "value": {"x": 1}}]}, "filters[0].value", ""),
        ({"filter_combination": "XOR"}, "filter_combination", "AND, OR"),
        ({"group_bys": [{"key": "a", "type": "date"}]}, "group_bys[0].type", "number"),
        (
            {"group_bys": [{"key": "a"}], "orders": [{"key": "b", "order": "ASCENDING"}]},
            "orders[0].key",
            "group-by",
        ),
        ({"orders": [{"key": "a", "order": "UP"}]}, "orders[0].order", "ASCENDING"),
        ({"name": 7}, "name", ""),
        # A name is one line: it heads pages, alerts' messages and the terminal.
        ({"name": "q\x1b]0;title\x07"}, "name", "one line"),
        ({"name": "two\nlines"}, "name", "one line"),
        ({"name": "n" * 201}, "name", "200"),
    ],
)
def test_invalid_fields_are_named_with_what_is_allowed(
    api: Api, body: dict[str, Any], field: str, hint: str
) -> None:
    r = api.create(body)
    assert r.status_code == 400, r.text
    errors = r.json()["errors"]
    named = [e for e in errors if e["field"] == field or e["field"].startswith(field + ".")]
    assert named, errors
    assert hint in named[0]["message"]


def test_a_body_that_is_not_a_json_object_is_refused(api: Api) -> None:
    assert api.create([1, 2]).status_code == 400
    r = api.client.post("/v1/queries", content=b"{not json", headers={"content-type": "x"})
    assert r.status_code == 400


def test_update_changes_only_the_fields_sent(api: Api) -> None:
    query_id = api.create_id(FULL)
    before = api.get(query_id).json()["query"]

    r = api.put(query_id, {"name": "Renamed", "id": "ignored", "author": "ignored"})
    assert r.status_code == 200
    after = r.json()["query"]
    assert after == api.get(query_id).json()["query"]
    assert after["name"] == "Renamed"
    assert fields_of(after) == {**FULL, "name": "Renamed"}
    assert after["id"] == query_id and after["author"] == before["author"] != "ignored"
    assert after["created_at"] == before["created_at"]
    assert after["updated_at"] >= before["updated_at"]  # set to the time: see the repo test

    # null clears a field
    cleared = api.put(query_id, {"description": None}).json()["query"]
    assert "description" not in cleared


def test_an_update_is_validated_against_the_merged_query(api: Api) -> None:
    query_id = api.create_id(FULL)
    r = api.put(query_id, {"keys": [{"key": "message"}]})  # FULL has calculations
    assert r.status_code == 400
    assert [e["field"] for e in r.json()["errors"]] == ["calculations"]
    # dropping the calculations in the same update makes it valid
    ok = api.put(query_id, {"keys": [{"key": "message"}], "calculations": None, "orders": None})
    assert ok.status_code == 200, ok.text
    assert ok.json()["query"]["keys"] == [{"key": "message"}]
    assert "calculations" not in ok.json()["query"]


def test_delete_then_the_query_is_gone(api: Api) -> None:
    query_id = api.create_id({"name": "short-lived"})
    r = api.delete(query_id)
    assert r.status_code == 200
    assert r.json() == {"query": {"id": query_id}}
    assert api.get(query_id).status_code == 404
    assert api.get(query_id).json() == {"message": "Not Found"}
    assert api.delete(query_id).status_code == 404
    assert api.put(query_id, {"name": "x"}).status_code == 404


def test_a_query_used_by_an_alert_cannot_be_deleted(api: Api, mine: Tenant, meta: MetaDB) -> None:
    query_id = api.create_id({"name": "watched"})
    with meta.session(immediate=True) as s:
        queries_repo.add_alert_reference(
            s, StoreTenant(mine.workspace_id, mine.environment_id), query_id, "Error spike"
        )
    r = api.delete(query_id)
    assert r.status_code == 403
    assert "Error spike" in r.json()["message"]
    assert api.get(query_id).status_code == 200


def test_list_holds_the_tenants_queries_with_and_without_the_slash(
    server: LiveServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    api, other_api = Api(server, tenant.admin_key), Api(server, other_tenant.admin_key)
    assert api.list() == []
    first = api.create_id({"name": "one"})
    second = api.create_id(FULL)
    other_api.create_id({"name": "theirs"})

    listed = api.list()
    assert [q["id"] for q in listed] == [first, second]
    assert listed[1] == api.get(second).json()["query"]
    assert api.list("/v1/queries/") == listed
    assert [q["name"] for q in other_api.list()] == ["theirs"]


def test_another_tenant_never_sees_or_changes_a_query(api: Api, other_api: Api) -> None:
    query_id = api.create_id(FULL)
    for r in (
        other_api.get(query_id),
        other_api.put(query_id, {"name": "hijacked"}),
        other_api.delete(query_id),
    ):
        assert r.status_code == 404
        assert r.json() == {"message": "Not Found"}
    assert all(q["id"] != query_id for q in other_api.list())
    assert fields_of(api.get(query_id).json()["query"]) == FULL


def test_keys_are_required_and_must_be_admin_keys(
    server: LiveServer, mine: Tenant, api: Api
) -> None:
    query_id = api.create_id({"name": "auth"})
    url = f"{server.url}/v1/queries/{query_id}"
    for headers in ({}, {"Authorization": "ll_sk_not-a-real-key"}, {"Authorization": ""}):
        r = web.get(url, headers=headers)
        assert r.status_code == 401
        assert r.json()["message"] == "Unauthorised"
    r = web.get(url, headers={"Authorization": mine.ingest_key})
    assert r.status_code == 403
    assert r.json()["message"] == "Forbidden"
    r = web.post(f"{server.url}/v1/queries", json={}, headers={"x-api-key": mine.ingest_key})
    assert r.status_code == 403

    for headers in (
        {"Authorization": f"Bearer {mine.admin_key}"},
        {"x-api-key": mine.admin_key},
    ):
        assert web.get(url, headers=headers).json()["query"]["name"] == "auth"


def test_a_name_stored_before_names_were_one_line_keeps_its_query_usable(
    api: Api, mine: Tenant, meta: MetaDB
) -> None:
    """A name is checked where it is written: one stored before the rule (a line break,
    300 characters) stays readable, its query runs, and other fields still change."""
    query_id = api.create_id({"name": "new", "calculations": [{"operator": "COUNT"}]})
    stored = {"name": "old\nname " + "x" * 300, "calculations": [{"operator": "COUNT"}]}
    with meta.session(immediate=True) as s:
        queries_repo.replace_query_fields(s, mine, query_id, stored)
    assert api.get(query_id).json()["query"]["name"] == stored["name"]
    changed = api.put(query_id, {"description": "kept usable"})
    assert changed.status_code == 200, changed.text
    now = int(time.time() * 1000)
    run = api.client.post(
        "/v1/query_run?wait=30", json={"query_id": query_id, "from": now - 60_000, "to": now}
    )
    assert run.status_code == 200 and run.json()["query_run"]["status"] == "COMPLETED", run.text
    # Sent again unchanged, as the console's form sends it: kept.
    same = api.put(query_id, {"name": stored["name"], "description": "again"})
    assert same.status_code == 200, same.text
    # A new name is what the rule refuses.
    renamed = api.put(query_id, {"name": "other\nname"})
    assert renamed.status_code == 400
    assert renamed.json()["errors"][0]["field"] == "name"
