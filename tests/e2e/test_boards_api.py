"""The Boards API against a real server: envelopes, validation, partial updates, auth,
tenants, and the saved queries a board shows (which cannot be deleted under it)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from limelight.store.meta import boards_repo as repo
from tests import web
from tests.support import LiveServer, Tenant

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


class Api:
    """The Boards and Queries APIs of one server with one key."""

    def __init__(self, server: LiveServer, key: str | None) -> None:
        headers = {"Authorization": key} if key else {}
        self.client = web.Client(base_url=server.url, headers=headers, timeout=30)

    def query(self, name: str) -> str:
        r = self.client.post("/v1/queries", json={"name": name})
        assert r.status_code == 200, r.text
        return str(r.json()["query"]["id"])

    def create(self, body: Any) -> httpx.Response:
        return self.client.post("/v1/boards", json=body)

    def create_id(self, body: Any) -> str:
        r = self.create(body)
        assert r.status_code == 200, r.text
        return str(r.json()["board"]["id"])

    def get(self, board_id: str) -> httpx.Response:
        return self.client.get(f"/v1/boards/{board_id}")

    def board(self, board_id: str) -> dict[str, Any]:
        r = self.get(board_id)
        assert r.status_code == 200, r.text
        board: dict[str, Any] = r.json()["board"]
        return board

    def put(self, board_id: str, body: Any) -> httpx.Response:
        return self.client.put(f"/v1/boards/{board_id}", json=body)

    def delete(self, board_id: str) -> httpx.Response:
        return self.client.delete(f"/v1/boards/{board_id}")

    def list(self, path: str = "/v1/boards") -> list[dict[str, Any]]:
        r = self.client.get(path)
        assert r.status_code == 200, r.text
        boards: list[dict[str, Any]] = r.json()["boards"]
        return boards


@pytest.fixture(scope="module")
def mine(server: LiveServer) -> Tenant:
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


def panels_of(board: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in p.items() if k != "id"} for p in board["panels"]]


def test_create_then_get_returns_the_board_with_its_panels_in_order(api: Api, mine: Tenant) -> None:
    errors, slow = api.query("errors"), api.query("slow")
    panels = [
        {"query_id": slow, "title": "p99", "visualization": "heatmap", "width": 4},
        {"query_id": errors, "title": "", "visualization": "number", "width": 1},
        {"query_id": slow, "title": "again", "visualization": "table", "width": 3},
    ]
    r = api.create({"name": "Checkout", "description": "the team's", "panels": panels})
    assert r.status_code == 200, r.text
    assert list(r.json()) == ["board"] and list(r.json()["board"]) == ["id"]
    board_id = r.json()["board"]["id"]

    board = api.board(board_id)
    assert list(board) == [
        "id", "name", "description", "panels", "created_at", "updated_at", "author"
    ]  # fmt: skip
    assert board["id"] == board_id
    assert (board["name"], board["description"]) == ("Checkout", "the team's")
    assert panels_of(board) == panels
    assert len({p["id"] for p in board["panels"]}) == 3
    assert ISO_UTC.match(board["created_at"]) and board["updated_at"] == board["created_at"]
    assert board["author"] == mine.owner_id != ""


def test_defaults_fill_what_a_panel_omits(api: Api) -> None:
    query_id = api.query("defaults")
    board_id = api.create_id({"name": "Minimal", "panels": [{"query_id": query_id}]})
    board = api.board(board_id)
    assert board["description"] is None
    assert panels_of(board) == [
        {"query_id": query_id, "title": "", "visualization": "line", "width": 2}
    ]
    assert api.board(api.create_id({"name": "Empty"}))["panels"] == []


@pytest.mark.parametrize(
    ("body", "field", "hint"),
    [
        ({}, "name", "name"),
        ({"name": "  "}, "name", "name"),
        ({"name": 7}, "name", "name"),
        ({"name": "b\u001b[2J"}, "name", "one line"),
        (
            {"name": "b", "panels": [{"query_id": "Q", "title": "t\r\nx"}]},
            "panels[0].title",
            "one line",
        ),
        ({"name": "b", "colour": "red"}, "colour", "unknown field"),
        ({"name": "b", "description": 3}, "description", ""),
        ({"name": "b", "panels": {"query_id": "x"}}, "panels", "list"),
        ({"name": "b", "panels": ["x"]}, "panels[0]", "object"),
        ({"name": "b", "panels": [{"visualization": "line"}]}, "panels[0].query_id", "query"),
        (
            {"name": "b", "panels": [{"query_id": "Q", "visualization": "pie"}]},
            "panels[0].visualization",
            "line, bars, heatmap, number, table",
        ),
        ({"name": "b", "panels": [{"query_id": "Q", "width": 0}]}, "panels[0].width", "1 to 4"),
        ({"name": "b", "panels": [{"query_id": "Q", "width": 5}]}, "panels[0].width", "1 to 4"),
        ({"name": "b", "panels": [{"query_id": "Q", "width": "2"}]}, "panels[0].width", "1 to 4"),
        ({"name": "b", "panels": [{"query_id": "Q", "width": 1.5}]}, "panels[0].width", "1 to 4"),
        ({"name": "b", "panels": [{"query_id": "Q", "size": 2}]}, "panels[0].size", "unknown"),
        ({"name": "b", "panels": [{"query_id": "Q"}] * 25}, "panels", "at most 24"),
    ],
)
def test_invalid_fields_are_named_with_what_is_allowed(
    api: Api, body: dict[str, Any], field: str, hint: str
) -> None:
    query_id = api.query("target")
    for panel in body.get("panels") or []:
        if isinstance(panel, dict) and panel.get("query_id") == "Q":
            panel["query_id"] = query_id
    before = len(api.list())
    r = api.create(body)
    assert r.status_code == 400, r.text
    assert r.json()["message"] == "Invalid board"
    errors = r.json()["errors"]
    named = [e for e in errors if e["field"] == field]
    assert named, errors
    assert hint in named[0]["message"]
    assert len(api.list()) == before  # nothing was made


def test_a_body_that_is_not_a_json_object_is_refused(api: Api) -> None:
    r = api.create([1, 2])
    assert r.status_code == 400
    assert r.json()["errors"] == [{"field": "board", "message": "must be a JSON object"}]
    r = api.client.post("/v1/boards", content=b"{not json", headers={"content-type": "x"})
    assert r.status_code == 400
    assert r.json()["reason"] == "the body is not valid JSON"


def test_a_query_of_another_environment_is_refused_like_a_missing_one(
    api: Api, other_api: Api
) -> None:
    theirs = other_api.query("their secret query")
    before = api.list()
    answers = [
        api.create({"name": "b", "panels": [{"query_id": q}]}) for q in (theirs, "no-such-query")
    ]
    for r in answers:
        assert r.status_code == 400
        assert r.json()["errors"] == [
            {"field": "panels[0].query_id", "message": "no saved query with this id here"}
        ]
    assert answers[0].json() == answers[1].json()
    assert api.list() == before

    board_id = api.create_id({"name": "mine", "panels": [{"query_id": api.query("mine")}]})
    r = api.put(board_id, {"panels": [{"query_id": theirs}]})
    assert r.status_code == 400
    assert [e["field"] for e in r.json()["errors"]] == ["panels[0].query_id"]


def test_update_changes_only_the_fields_sent(api: Api) -> None:
    first, second = api.query("first"), api.query("second")
    board_id = api.create_id(
        {"name": "B", "description": "d", "panels": [{"query_id": first, "width": 3}]}
    )
    before = api.board(board_id)

    r = api.put(board_id, {"name": "Renamed", "id": "ignored", "author": "ignored"})
    assert r.status_code == 200, r.text
    after = r.json()["board"]
    assert after == api.board(board_id)
    assert after["name"] == "Renamed" and after["description"] == "d"
    # The panels stay as they were, ids included.
    assert after["panels"] == before["panels"]
    assert after["id"] == board_id and after["author"] == before["author"] != "ignored"
    assert after["created_at"] == before["created_at"] <= after["updated_at"]

    new_panels = [
        {"query_id": second, "title": "two", "visualization": "bars", "width": 4},
        {"query_id": first, "title": "one", "visualization": "table", "width": 1},
    ]
    changed = api.put(board_id, {"panels": new_panels, "description": None}).json()["board"]
    assert panels_of(changed) == new_panels
    assert changed["description"] is None and changed["name"] == "Renamed"


def test_a_board_read_back_is_a_valid_body_and_changes_nothing(api: Api) -> None:
    query_id = api.query("round trip")
    board_id = api.create_id(
        {"name": "R", "panels": [{"query_id": query_id, "visualization": "number", "width": 1}]}
    )
    board = api.board(board_id)
    again = api.put(board_id, board).json()["board"]
    assert panels_of(again) == panels_of(board)
    assert {k: again[k] for k in ("id", "name", "description", "created_at", "author")} == {
        k: board[k] for k in ("id", "name", "description", "created_at", "author")
    }


def test_a_refused_update_changes_nothing(api: Api) -> None:
    query_id = api.query("kept")
    board_id = api.create_id({"name": "Kept", "panels": [{"query_id": query_id}]})
    before = api.board(board_id)
    r = api.put(board_id, {"name": "New", "panels": [{"query_id": query_id, "width": 9}]})
    assert r.status_code == 400
    assert [e["field"] for e in r.json()["errors"]] == ["panels[0].width"]
    assert api.board(board_id) == before


def test_delete_then_the_board_is_gone_and_its_queries_stay(api: Api) -> None:
    query_id = api.query("stays")
    board_id = api.create_id({"name": "short-lived", "panels": [{"query_id": query_id}]})
    r = api.delete(board_id)
    assert r.status_code == 200
    assert r.json() == {"board": {"id": board_id}}
    assert api.get(board_id).status_code == 404
    assert api.get(board_id).json() == {"message": "Not Found"}
    assert api.delete(board_id).status_code == 404
    assert api.put(board_id, {"name": "x"}).status_code == 404
    assert api.client.get(f"/v1/queries/{query_id}").status_code == 200


def test_a_query_shown_on_boards_cannot_be_deleted(api: Api) -> None:
    query_id = api.query("watched")
    first = api.create_id({"name": "Ops", "panels": [{"query_id": query_id}]})
    second = api.create_id(
        {"name": "Checkout", "panels": [{"query_id": query_id}, {"query_id": query_id}]}
    )

    r = api.client.delete(f"/v1/queries/{query_id}")
    assert r.status_code == 403
    message = r.json()["message"]
    assert f"'Ops' ({first})" in message and f"'Checkout' ({second})" in message
    assert api.client.get(f"/v1/queries/{query_id}").status_code == 200

    api.delete(first)
    assert api.put(second, {"panels": []}).status_code == 200
    assert api.client.delete(f"/v1/queries/{query_id}").status_code == 200


def test_list_holds_the_tenants_boards_with_and_without_the_slash(
    server: LiveServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    api, other_api = Api(server, tenant.admin_key), Api(server, other_tenant.admin_key)
    assert api.list() == []
    first = api.create_id({"name": "one"})
    second = api.create_id({"name": "two", "panels": [{"query_id": api.query("q")}]})
    other_api.create_id({"name": "theirs"})

    listed = api.list()
    assert [b["id"] for b in listed] == [first, second]
    assert listed[1] == api.board(second)
    assert api.list("/v1/boards/") == listed
    assert [b["name"] for b in other_api.list()] == ["theirs"]


def test_another_tenant_never_sees_or_changes_a_board(api: Api, other_api: Api) -> None:
    board_id = api.create_id({"name": "private", "panels": [{"query_id": api.query("p")}]})
    before = api.board(board_id)
    for r in (
        other_api.get(board_id),
        other_api.put(board_id, {"name": "hijacked"}),
        other_api.delete(board_id),
    ):
        assert r.status_code == 404
        assert r.json() == {"message": "Not Found"}
    assert all(b["id"] != board_id for b in other_api.list())
    assert api.board(board_id) == before


def test_keys_are_required_and_must_be_admin_keys(
    server: LiveServer, mine: Tenant, api: Api
) -> None:
    board_id = api.create_id({"name": "auth"})
    url = f"{server.url}/v1/boards/{board_id}"
    for headers in ({}, {"Authorization": "ll_sk_not-a-real-key"}):
        r = web.get(url, headers=headers)
        assert r.status_code == 401
        assert r.json()["message"] == "Unauthorised"
    assert web.get(url, headers={"Authorization": mine.ingest_key}).status_code == 403
    r = web.post(
        f"{server.url}/v1/boards", json={"name": "x"}, headers={"x-api-key": mine.ingest_key}
    )
    assert r.status_code == 403
    assert web.get(url, headers={"x-api-key": mine.admin_key}).json()["board"]["name"] == "auth"


def test_a_name_stored_before_names_were_one_line_keeps_its_board_changeable(
    api: Api, mine: Tenant, server: LiveServer
) -> None:
    query_id = api.query("shown")
    board_id = api.create_id({"name": "new", "panels": [{"query_id": query_id, "title": "t"}]})
    meta = server.meta
    with meta.session(immediate=True) as s:
        repo.get_board(s, mine, board_id, lock=True).name = "old\x1b]0;x\x07name"
    changed = api.client.put(f"/v1/boards/{board_id}", json={"description": "still changes"})
    assert changed.status_code == 200, changed.text
    assert changed.json()["board"]["name"] == "old\x1b]0;x\x07name"
    renamed = api.client.put(f"/v1/boards/{board_id}", json={"name": "again\x1b]0;x\x07"})
    assert renamed.status_code == 400 and renamed.json()["errors"][0]["field"] == "name"
