"""Boards in the console over HTTP: the forms (add from the builder, move, resize, remove,
rename, delete) answer 303 and change only what they say, need the session's CSRF token,
and name nothing of another workspace; the board page runs every panel."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests import web
from tests.e2e.test_console_pages import Member, _Markup, member_of
from tests.support import LiveServer

STATE = re.compile(r'<script type="application/json" id="board-state">(.*?)</script>', re.S)


@pytest.fixture(scope="module")
def member(server: LiveServer) -> Iterator[Member]:
    found = member_of(server, server.new_tenant())
    yield found
    found.browser.close()


@pytest.fixture(scope="module")
def stranger(server: LiveServer) -> Iterator[Member]:
    found = member_of(server, server.new_tenant())
    yield found
    found.browser.close()


def board_api(server: LiveServer, m: Member, board_id: str) -> dict[str, Any]:
    r = web.get(f"{server.url}/v1/boards/{board_id}", headers={"Authorization": m.tenant.admin_key})
    assert r.status_code == 200, r.text
    board: dict[str, Any] = r.json()["board"]
    return board


def add(m: Member, **fields: Any) -> httpx.Response:
    panel = {"query_id": m.query_id, "visualization": "line", "width": "2", "range": "1h"}
    return m.post(f"{m.base}/board_panels", **(panel | fields))


def board_id_of(answer: httpx.Response, m: Member) -> str:
    assert answer.status_code == 303, answer.text
    found = re.fullmatch(rf"{m.base}/boards/(\w+)\?range=1h", answer.headers["location"])
    assert found, answer.headers["location"]
    return found.group(1)


def test_panels_are_added_moved_resized_and_removed_by_forms(
    member: Member, server: LiveServer
) -> None:
    board_id = board_id_of(add(member, board="", new_board="Shop", visualization="number"), member)
    assert board_id_of(add(member, board=board_id, title="Count", width="4"), member) == board_id
    first, second = (p["id"] for p in board_api(server, member, board_id)["panels"])

    page = member.get(f"{member.base}/boards/{board_id}", range="1h")
    assert page.status_code == 200
    markup = _Markup()
    markup.feed(page.text)
    assert markup.problems == []
    state = STATE.search(page.text)
    assert state
    panels = json.loads(state.group(1))["panels"]
    # Both panels ran over the board's hour: the member's 5 events counted in each.
    assert [(p["name"], p["visualization"], p["width"]) for p in panels] == [
        ("count", "number", 2),
        ("Count", "line", 4),
    ]
    assert [p["data"]["aggregates"][0]["values"]["COUNT"] for p in panels] == [5, 5]
    assert f'href="{member.base}/query?saved={member.query_id}&amp;range=1h"' in page.text

    b = f"{member.base}/boards/{board_id}/panels"
    moved = member.post(f"{b}/{second}/move", direction="earlier", range="24h")
    assert moved.status_code == 303
    assert moved.headers["location"] == f"{member.base}/boards/{board_id}?range=24h"
    assert member.post(f"{b}/{first}/width", width="3", range="1h").status_code == 303
    board = board_api(server, member, board_id)
    assert [(p["id"], p["width"]) for p in board["panels"]] == [(second, 4), (first, 3)]

    assert member.post(f"{b}/{second}/delete", range="1h").status_code == 303
    assert [p["id"] for p in board_api(server, member, board_id)["panels"]] == [first]

    renamed = member.post(f"{member.base}/boards/{board_id}", name="Shop floor", range="1h")
    assert renamed.status_code == 303
    assert board_api(server, member, board_id)["name"] == "Shop floor"
    listing = member.get(f"{member.base}/boards")
    assert "Shop floor" in listing.text and f"{member.base}/boards/{board_id}" in listing.text

    gone = member.post(f"{member.base}/boards/{board_id}/delete")
    assert gone.status_code == 303 and gone.headers["location"] == f"{member.base}/boards"
    assert member.get(f"{member.base}/boards/{board_id}").status_code == 404


def test_bad_input_is_a_page_naming_the_field_and_changes_nothing(
    member: Member, server: LiveServer
) -> None:
    board_id = board_id_of(add(member, board="", new_board="Kept"), member)
    [panel] = board_api(server, member, board_id)["panels"]
    b = f"{member.base}/boards/{board_id}/panels"
    for answer in (
        member.post(f"{b}/{panel['id']}/width", width="9"),
        member.post(f"{b}/{panel['id']}/width", width="wide"),
        add(member, board=board_id, visualization="pie"),
        add(member, board=board_id, query_id="nope"),
        add(member, board="", new_board=" "),
        member.post(f"{member.base}/boards/{board_id}", name=""),
        member.get(f"{member.base}/boards/{board_id}", range="5y"),
    ):
        assert answer.status_code == 400, answer.text
        assert "Internal" not in answer.text
    assert "panels[1].visualization" in add(member, board=board_id, visualization="pie").text
    assert "panels[0].width" in member.post(f"{b}/{panel['id']}/width", width="9").text
    assert board_api(server, member, board_id)["panels"] == [panel]


def test_board_forms_refuse_a_missing_or_foreign_csrf_token(
    member: Member, stranger: Member, server: LiveServer
) -> None:
    board_id = board_id_of(add(member, board="", new_board="Guarded"), member)
    before = board_api(server, member, board_id)
    [panel] = before["panels"]
    b = f"{member.base}/boards/{board_id}"
    forms = [
        (f"{member.base}/boards", {"name": "forged"}),
        (f"{member.base}/board_panels", {"query_id": member.query_id, "board": board_id}),
        (b, {"name": "forged"}),
        (f"{b}/delete", {}),
        (f"{b}/panels/{panel['id']}/move", {"direction": "later"}),
        (f"{b}/panels/{panel['id']}/width", {"width": "1"}),
        (f"{b}/panels/{panel['id']}/delete", {}),
    ]
    for path, fields in forms:
        for token in ("", "f" * 64, stranger.csrf):
            answer = member.browser.client.post(path, data={"csrf": token, **fields})
            assert answer.status_code == 403, (path, token)
    assert board_api(server, member, board_id) == before


def test_a_stranger_gets_404_for_every_board_page_and_form(
    member: Member, stranger: Member, server: LiveServer
) -> None:
    board_id = board_id_of(add(member, board="", new_board="Private"), member)
    before = board_api(server, member, board_id)
    [panel] = before["panels"]
    b = f"{member.base}/boards/{board_id}"
    for path in (f"{member.base}/boards", b):
        answer = stranger.get(path)
        assert answer.status_code == 404 and "Private" not in answer.text
    for path, fields in [
        (f"{member.base}/boards", {"name": "theirs"}),
        (f"{member.base}/board_panels", {"query_id": member.query_id, "new_board": "x"}),
        (b, {"name": "hijacked"}),
        (f"{b}/delete", {}),
        (f"{b}/panels/{panel['id']}/width", {"width": "1"}),
        (f"{b}/panels/{panel['id']}/delete", {}),
    ]:
        assert stranger.post(path, **fields).status_code == 404, path
    # In the stranger's own environment, the member's board and query are unknown too.
    s = stranger.base
    assert stranger.get(f"{s}/boards/{board_id}").status_code == 404
    assert stranger.post(f"{s}/boards/{board_id}/delete").status_code == 404
    theirs = stranger.post(
        f"{s}/board_panels", query_id=member.query_id, new_board="mine", visualization="line"
    )
    assert theirs.status_code == 400
    assert "no saved query with this id here" in theirs.text
    assert board_api(server, member, board_id) == before
