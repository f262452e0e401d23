"""The Events page for investigating, over HTTP on a live server: the field sidebar (a
key's top values, each a filter), an event's keys as a table with the same actions and a
breadcrumb back to the page it came from, and levels at a glance."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from html import unescape
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.e2e.test_console_pages import Member, member_of
from tests.support import LiveServer

LEVELS = ["error"] * 3 + ["warn"] * 2 + ["info"] * 15


@pytest.fixture(scope="module")
def member(server: LiveServer) -> Iterator[Member]:
    found = member_of(server, server.new_tenant())
    now = int(time.time() * 1000)
    events = [
        {
            "timestamp": now - (i + 1) * 1000,
            "level": level,
            "message": f"request {i}",
            "http": {"status": 500 if level == "error" else 200, "path": f"/a?b={i}&c=d"},
            # The same digits as a number and as text: two values, told apart.
            "code": 500 if i == 0 else ("500" if i == 1 else 200),
            "service": "api",
        }
        for i, level in enumerate(LEVELS)
    ]
    assert server.send(found.tenant.ingest_key, "app", events).status_code == 202
    yield found
    found.browser.close()


@pytest.fixture(scope="module")
def stranger(server: LiveServer) -> Iterator[Member]:
    found = member_of(server, server.new_tenant())
    yield found
    found.browser.close()


class _Links(HTMLParser):
    """Every link of a page: its address, aria-label and text."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[dict[str, str]] = []
        self._open: dict[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            a = {k: v or "" for k, v in attrs}
            self._open = {"href": a.get("href", ""), "label": a.get("aria-label", ""), "text": ""}
            self.links.append(self._open)

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open["text"] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._open = None


def links(html: str) -> list[dict[str, str]]:
    parser = _Links()
    parser.feed(html)
    return parser.links


def link(html: str, **match: str) -> str:
    found = [a["href"] for a in links(html) if all(a[k].strip() == v for k, v in match.items())]
    assert len(found) == 1, (match, found)
    return found[0]


def pairs(address: str) -> list[tuple[str, str]]:
    return parse_qsl(urlsplit(address).query, keep_blank_values=True)


def shown_count(html: str) -> int:
    """The total the page's status line gives ("1–3 of 3 events")."""
    found = re.search(r"of ([\d,]+) events", html)
    assert found, html[:2000]
    return int(found.group(1).replace(",", ""))


def values_of(m: Member, key: str, **params: Any) -> Any:
    answer = m.browser.client.get(
        f"{m.base}/events/values",
        params={"ds": "app", "range": "1h", "key": key, **params},
        headers={"Accept": "application/json"},
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_the_sidebar_gives_a_keys_top_values_with_their_share_and_filters(
    member: Member,
) -> None:
    answer = values_of(member, "level")
    assert [(v["text"], v["count"]) for v in answer["values"]] == [
        ("info", 15),
        ("error", 3),
        ("warn", 2),
    ]
    assert [round(v["share"], 3) for v in answer["values"]] == [0.75, 0.15, 0.1]
    assert (answer["events"], answer["distinct"], answer["sampled"]) == (20, 3, False)
    error = answer["values"][1]
    base = [("ds", "app"), ("range", "1h")]
    # The key stays open on the page a value leads to.
    opened = ("open", "level")
    assert pairs(error["include"]) == [*base, ("fk", "level"), ("fo", "="), ("fv", "error"), opened]
    assert pairs(error["exclude"]) == [
        *base,
        ("fk", "level"),
        ("fo", "!="),
        ("fv", "error"),
        opened,
    ]
    assert urlsplit(error["include"]).path == f"{member.base}/events"
    assert pairs(answer["group_by"]) == [
        ("nt", "dataset"),
        ("nv", "app"),
        ("co", "COUNT"),
        ("g", "level"),
        ("range", "1h"),
    ]
    assert urlsplit(answer["group_by"]).path == f"{member.base}/query"
    assert pairs(answer["column"]) == [*base, ("cols", "level"), opened]

    # Following a value's filter lists that value's events alone; != the rest.
    assert shown_count(member.get(error["include"]).text) == 3
    assert shown_count(member.get(error["exclude"]).text) == 17


def test_the_sidebars_values_follow_the_pages_filters_and_search(member: Member) -> None:
    answer = values_of(member, "level", fk="http.status", fo="=", fv="500")
    assert [(v["text"], v["count"]) for v in answer["values"]] == [("error", 3)]
    # A filter added keeps the page's filters before it.
    assert pairs(answer["values"][0]["include"])[2:-1] == [
        ("fk", "http.status"),
        ("fo", "="),
        ("fv", "500"),
        ("fk", "level"),
        ("fo", "="),
        ("fv", "error"),
    ]
    searched = values_of(member, "level", q="request 1")  # request 1, 10..19
    assert sum(v["count"] for v in searched["values"]) == 11


def test_a_number_and_the_same_digits_as_text_are_two_values_and_two_filters(
    member: Member,
) -> None:
    answer = values_of(member, "code")
    by_text = {v["text"]: v for v in answer["values"]}
    assert {t: v["count"] for t, v in by_text.items()} == {"200": 18, "500": 1, '"500"': 1}
    number, text = by_text["500"], by_text['"500"']
    assert dict(pairs(number["include"]))["fv"] == "500"
    assert dict(pairs(text["include"]))["fv"] == '"500"'
    for value in (number, text):
        page = member.get(value["include"]).text
        assert shown_count(page) == 1
    assert "request 0" in member.get(number["include"]).text
    assert "request 1<" in member.get(text["include"]).text


def test_an_open_key_is_drawn_by_the_page_itself(member: Member) -> None:
    page = member.get(f"{member.base}/events", ds="app", range="1h", open="level").text
    include = link(page, text="error")
    filtered = [("fk", "level"), ("fo", "="), ("fv", "error"), ("open", "level")]
    assert pairs(include)[-4:] == filtered  # the sidebar stays open on the next page
    exclude = link(page, label="Leave out warn")
    assert pairs(exclude)[-4:-1] == [("fk", "level"), ("fo", "!="), ("fv", "warn")]
    assert "75%" in page and "3 values in 20 events" in page
    # Every key is listed, a link that opens it.
    for key in ("level", "http.status", "http.path", "code", "_service"):
        assert ("open", key) in pairs(link(page, text=key)), key


def test_a_bad_key_or_a_missing_dataset_is_a_clear_400(member: Member) -> None:
    for params, field in (({"key": ""}, "key"), ({"key": "a..b"}, "key"), ({"ds": ""}, "ds")):
        answer = member.browser.client.get(
            f"{member.base}/events/values",
            params={"ds": "app", "key": "level", **params},
            headers={"Accept": "application/json"},
        )
        assert answer.status_code == 400, (params, answer.text)
        assert [e["field"] for e in answer.json()["errors"]] == [field]
    # The page with a key that is no key opens nothing and shows the events.
    page = member.get(f"{member.base}/events", ds="app", open="a..b")
    assert page.status_code == 200 and shown_count(page.text) == 20


def test_another_workspaces_user_gets_404_for_the_values(member: Member, stranger: Member) -> None:
    path = f"{member.base}/events/values"
    params = {"ds": "app", "key": "level"}
    answer = stranger.browser.client.get(
        path, params=params, headers={"Accept": "application/json"}
    )
    assert answer.status_code == 404
    assert "error" not in answer.text and "info" not in answer.text
    assert stranger.browser.client.get(path, params=params).status_code == 404
    # In the stranger's own environment, the member's dataset holds nothing.
    own = stranger.browser.client.get(
        f"{stranger.base}/events/values", params=params, headers={"Accept": "application/json"}
    )
    assert own.status_code == 404
    page = stranger.get(f"{member.base}/events", ds="app", open="level")
    assert page.status_code == 404


def test_levels_colour_the_rows_and_stack_the_histogram(member: Member) -> None:
    page = member.get(f"{member.base}/events", ds="app", range="1h").text
    assert '<th title="level">Level</th>' in page
    assert page.count('class="level-error"') == 3
    assert page.count('class="level-warn"') == 2
    chart = re.search(r'id="histogram-data">(.*?)</script>', page, re.S)
    assert chart
    data = json.loads(unescape(chart.group(1)))
    assert data["stacked"] is True
    totals = {line["label"]: sum(line["values"]) for line in data["lines"]}
    assert totals == {"info": 15, "error": 3, "warn": 2}
    # A dataset without a level key: one line of counts, no Level column.
    plain = member.get(f"{member.base}/events", ds="orders", range="1h").text
    assert "Level</th>" not in plain and "level-error" not in plain
    chart = re.search(r'id="histogram-data">(.*?)</script>', plain, re.S)
    assert chart
    lines = json.loads(unescape(chart.group(1)))["lines"]
    assert [(line["label"], sum(line["values"])) for line in lines] == [("events", 5)]


def test_an_events_detail_is_a_table_of_its_keys_and_leads_back_to_its_page(
    member: Member,
) -> None:
    listing = f"{member.base}/events?ds=app&range=1h&fk=level&fo=%3D&fv=error&cols=code"
    page = member.get(listing).text
    opened = [a["href"] for a in links(page) if "/events/app/" in a["href"]][0]
    detail = member.get(opened)
    assert detail.status_code == 200
    html = detail.text
    # The breadcrumb is the page it came from: dataset, timeframe, filter, columns.
    back = link(html, text="Events of app (filtered)")
    assert pairs(back) == pairs(listing)
    # Nested keys flattened, values as JSON where not text.
    assert '<th scope="row"><code>http.status</code></th>' in html
    assert '<td class="value"><code>500</code></td>' in html
    assert '<td class="value"><code>error</code></td>' in html
    keep = [("ds", "app"), ("range", "1h"), ("fk", "level"), ("fo", "="), ("fv", "error")]
    include = link(html, label="Filter http.status = this value")
    added = [("fk", "http.status"), ("fo", "="), ("fv", "500")]
    assert pairs(include) == [*keep, *added, ("cols", "code")]
    exclude = link(html, label="Filter level != this value")
    assert pairs(exclude)[-4:-1] == [("fk", "level"), ("fo", "!="), ("fv", "error")]
    group = link(html, label="Group by http.path")
    assert urlsplit(group).path == f"{member.base}/query"
    assert ("g", "http.path") in pairs(group) and ("fv", "error") in pairs(group)
    column = link(html, label="Add http.path as a column")
    assert ("cols", "code,http.path") in pairs(column)
    # code is a column already: no link to add it again.
    assert not [a for a in links(html) if a["label"] == "Add code as a column"]
    # Following its filter narrows the page it came from.
    assert shown_count(member.get(include).text) == 3
    # Opened without a page to go back to (a trace's link): the dataset's events.
    bare = member.get(urlsplit(opened).path).text
    assert pairs(link(bare, text="Events of app")) == [("ds", "app"), ("range", "1h")]
