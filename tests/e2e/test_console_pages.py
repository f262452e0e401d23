"""The console's pages over HTTP: security headers, CSRF on every form, scoping to the
user's environments, readable errors, empty states, alerts and saved queries."""

from __future__ import annotations

import html
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from fastapi.routing import APIRoute
from sqlalchemy import select

from limelight.console import PAGE_MODULES
from limelight.store.meta.models import ApiKey
from tests import web
from tests.e2e.oauth_support import (
    Browser,
    exchange,
    new_user,
    parse_page,
    post_forms,
    query_of,
    register,
)
from tests.support import LiveServer, Tenant


@dataclass
class Member:
    tenant: Tenant
    browser: Browser
    csrf: str
    query_id: str
    event: dict[str, Any]

    @property
    def base(self) -> str:
        return f"/env/{self.tenant.environment_id}"

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.browser.client.get(path, params=params or None)

    def post(self, path: str, **fields: Any) -> httpx.Response:
        return self.browser.client.post(path, data={"csrf": self.csrf, **fields})


def member_of(server: LiveServer, tenant: Tenant) -> Member:
    email, password = new_user(server, tenant.workspace_id)
    browser = Browser(server)
    assert browser.login(email, password).status_code == 303
    csrf = post_forms(browser.client.get("/").text, "/logout")[0].value("csrf")
    assert csrf
    now = int(time.time() * 1000)
    events = [
        {"timestamp": now - i * 1000, "message": f"paid {i}", "duration": i, "service": "shop"}
        for i in range(5)
    ]
    assert server.send(tenant.ingest_key, "orders", events).status_code == 202
    query = web.post(
        f"{server.url}/v1/queries",
        json={"name": "count", "calculations": [{"operator": "COUNT"}]},
        headers={"Authorization": tenant.admin_key},
        timeout=30,
    )
    [event] = server.read(tenant.admin_key, "orders", limit=1)
    return Member(tenant, browser, csrf, query.json()["query"]["id"], event)


@pytest.fixture(scope="module")
def member(server: LiveServer) -> Iterator[Member]:
    found = member_of(server, server.new_tenant())
    yield found
    found.browser.close()


@pytest.fixture(scope="module")
def stranger(server: LiveServer) -> Iterator[Member]:
    """A user of another workspace."""
    found = member_of(server, server.new_tenant())
    yield found
    found.browser.close()


def pages_of(m: Member) -> list[str]:
    e = m.event
    return [
        f"{m.base}/events",
        f"{m.base}/events?ds=orders&q=paid&fk=duration&fo=%3E&fv=1",
        f"{m.base}/events?ds=orders&open=duration",  # the field sidebar's values drawn
        f"{m.base}/events/orders/{e['_id']}?t={e['_timestamp']}",
        f"{m.base}/events/orders/{e['_id']}",  # without its time: found all the same
        f"{m.base}/datasets",
        f"{m.base}/datasets/orders",
        f"{m.base}/query?nt=dataset&nv=orders&co=COUNT&g=_service",
        f"{m.base}/query?saved={m.query_id}",
        f"{m.base}/queries",
        f"{m.base}/traces",
        f"{m.base}/traces?services=shop&orderBy=duration&fk=duration&fo=%3E&fv=1",
        f"{m.base}/traces/{'ab' * 16}",
        f"{m.base}/services",
        f"{m.base}/services/shop",
        f"{m.base}/keys",
        f"{m.base}/alerts",
        f"{m.base}/alerts/new",
    ]


class _Markup(HTMLParser):
    """What could run on a page: scripts, handler attributes, inline styles, outside assets."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []
        self.scripts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for name in a:
            if name.startswith("on") or name == "style":
                self.problems.append(f"<{tag} {name}=...>")
        if tag == "style":
            self.problems.append("<style>")
        if tag == "script":
            src, kind = a.get("src"), a.get("type")
            if src:
                self.scripts.append(src)
                if not src.startswith("/console/static/"):
                    self.problems.append(f"script from {src}")
            elif kind != "application/json":
                self.problems.append("an inline script")
        if tag == "link" and not (a.get("href") or "").startswith("/console/static/"):
            self.problems.append(f"link to {a.get('href')}")


def test_every_page_has_the_security_headers_and_runs_only_the_servers_scripts(
    member: Member,
) -> None:
    for path in pages_of(member):
        page = member.get(path)
        assert page.status_code == 200, (path, page.text[:300])
        csp = page.headers["content-security-policy"]
        assert "script-src 'self';" in csp and "unsafe" not in csp, path
        assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp
        assert page.headers["referrer-policy"] == "no-referrer"
        assert page.headers["x-frame-options"] == "DENY"
        assert page.headers["cache-control"] == "no-store"
        assert re.fullmatch(r"app;dur=\d+\.\d", page.headers["server-timing"])
        markup = _Markup()
        markup.feed(page.text)
        assert markup.problems == [], path
        for src in markup.scripts:
            script = member.get(src)
            assert script.status_code == 200
            assert script.headers["content-type"].startswith("text/javascript")


def test_every_page_links_to_the_api_docs(member: Member) -> None:
    for path in ["/", *pages_of(member)]:
        assert '<a class="docs" href="/docs">API docs</a>' in member.get(path).text, path
    docs = member.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


def test_the_vendored_chart_library_is_served_by_the_app_and_nothing_else_is(
    member: Member,
) -> None:
    uplot = member.get("/console/static/vendor/uplot/uPlot.iife.min.js")
    assert uplot.status_code == 200 and "uPlot" in uplot.text
    for path in ("vendor/vendor.json", "vendor/uplot/LICENSE", "../render.py", "%2e%2e/render.py"):
        assert member.get(f"/console/static/{path}").status_code == 404, path


def test_forms_refuse_a_missing_or_foreign_csrf_token(
    member: Member, stranger: Member, server: LiveServer
) -> None:
    keys_before = member.get(f"{member.base}/keys").text.count("<tr")
    b = member.base
    key_id = re.search(r"/keys/(\w+)/revoke", member.get(f"{b}/keys").text)
    assert key_id
    forms = [
        (f"{b}/keys", {"kind": "admin", "name": "x"}),
        (f"{b}/keys/{key_id.group(1)}/revoke", {}),
        (f"{b}/redaction", {}),
        (f"/workspaces/{member.tenant.workspace_id}/environments", {"name": "forged"}),
        (f"{b}/queries", {"name": "forged", "builder": "co=COUNT"}),
        (f"{b}/queries/{member.query_id}", {"name": "forged", "builder": "co=COUNT"}),
        (f"{b}/queries/{member.query_id}/delete", {}),
        (f"{b}/alerts", {"name": "x", "target": f"{member.query_id}|COUNT", "value": "1"}),
        (f"{b}/query/run", {}),
        ("/logout", {}),
    ]
    for path, fields in forms:
        for token in ("", "f" * 64, "é" * 64, stranger.csrf):
            answer = member.browser.client.post(path, data={"csrf": token, **fields})
            assert answer.status_code == 403, (path, token)
            assert "The form expired" in answer.text
    # A script's token comes in a header, read as Latin-1: a byte past ASCII is refused.
    scripted = member.browser.client.post(
        f"{b}/query/run",
        content="co=COUNT",
        headers=[
            (b"content-type", b"application/x-www-form-urlencoded"),
            (b"x-csrf-token", b"\xe9" * 64),
        ],
    )
    assert scripted.status_code == 403
    # Nothing changed: the same keys, the query still there, still logged in, redaction on.
    keys_page = member.get(f"{member.base}/keys")
    assert keys_page.text.count("<tr") == keys_before
    assert "Redaction is on" in keys_page.text
    assert member.get(f"{member.base}/query", saved=member.query_id).status_code == 200
    assert server.read(member.tenant.admin_key, "orders", limit=1)


def test_a_stranger_gets_404_for_every_page_and_form_of_another_workspace(
    member: Member, stranger: Member, server: LiveServer
) -> None:
    for path in pages_of(member):
        answer = stranger.get(path)
        assert answer.status_code == 404, path
        assert "There is no such page" in answer.text
        assert "paid" not in answer.text
    admin_key_id = re.search(r"/keys/(\w+)/revoke", member.get(f"{member.base}/keys").text)
    assert admin_key_id
    b = member.base
    for path, fields in [
        (f"{b}/keys", {"kind": "admin"}),
        (f"{b}/keys/{admin_key_id.group(1)}/revoke", {}),
        (f"{b}/queries/{member.query_id}/delete", {}),
        (f"{b}/redaction", {}),
        (f"/workspaces/{member.tenant.workspace_id}/environments", {"name": "theirs"}),
        (f"{b}/query/run", {}),
    ]:
        assert stranger.post(path, **fields).status_code == 404, path
    # In the stranger's own environment, the member's ids are unknown too.
    s = stranger.base
    assert stranger.get(f"{s}/query", saved=member.query_id).status_code == 404
    assert stranger.post(f"{s}/keys/{admin_key_id.group(1)}/revoke").status_code == 404
    e = member.event
    assert stranger.get(f"{s}/events/orders/{e['_id']}", t=e["_timestamp"]).status_code == 404
    assert web.get(
        f"{server.url}/v1/datasets", headers={"Authorization": member.tenant.admin_key}
    ).is_success  # the member's keys all still work
    assert member.get(f"{member.base}/query", saved=member.query_id).status_code == 200


def test_a_new_environment_shows_how_to_send_a_first_event(
    member: Member, server: LiveServer
) -> None:
    created = member.post(
        f"/workspaces/{member.tenant.workspace_id}/environments", name="empty", redact="on"
    )
    assert created.status_code == 303
    env_base = created.headers["location"].removesuffix("/keys")
    member.post(f"{env_base}/keys", kind="ingest", name="first")
    for page in ("/events", "/datasets"):
        text = member.get(env_base + page).text
        assert "No events" in text
        key = re.search(r'-H "x-api-key: (ll_pk_[\w-]+)"', text)
        assert key, page
        assert f"curl -X POST {server.url}/events/v1/logs" in text
    sent = server.send(key.group(1), "logs", [{"message": "first"}])
    assert sent.status_code == 202
    assert "first" in member.get(env_base + "/events").text


def test_a_browser_gets_pages_for_addresses_that_do_not_exist(member: Member) -> None:
    html = {"Accept": "text/html,application/xhtml+xml"}
    client = member.browser.client
    missing = client.get(f"{member.base}/no-such-page", headers=html)
    assert missing.status_code == 404 and "There is no such page" in missing.text
    assert missing.headers["content-type"].startswith("text/html")
    wrong = client.get(f"{member.base}/keys/abc/revoke", headers=html)
    assert wrong.status_code == 405 and "does not answer that way" in wrong.text
    api = client.get("/v1/no-such-endpoint", headers=html)  # an API keeps its JSON
    assert api.status_code == 404 and api.json() == {"message": "Not Found"}


def test_a_bad_query_or_a_failed_run_reads_as_a_sentence(member: Member) -> None:
    bad_filter = member.get(f"{member.base}/query", nt="dataset", nv="orders", fk="x", fo="~~")
    assert bad_filter.status_code == 400
    assert "filters[0].operation" in bad_filter.text and "unknown operation" in bad_filter.text
    bad_time = member.get(f"{member.base}/events", **{"from": "yesterday", "to": "1"})
    assert bad_time.status_code == 400
    assert "unix milliseconds" in bad_time.text and "Traceback" not in bad_time.text
    headers = {"X-CSRF-Token": member.csrf, "Accept": "application/json"}
    run = member.browser.client.post(
        f"{member.base}/query/run",
        content="nt=dataset&nv=orders&q=(unclosed&qr=1&range=1h",
        headers=headers,
    )
    assert run.status_code == 200
    assert run.json()["query_run"]["status"] == "FAILED"
    assert run.json()["query_run"]["error"] == (
        "the regular expression in needle.value is not valid RE2 syntax"
    )
    invalid = member.browser.client.post(
        f"{member.base}/query/run", content="co=P99&range=1h", headers=headers
    )
    assert invalid.status_code == 400
    assert invalid.json()["errors"] == [
        {"field": "calculations[0].key", "message": "P99 needs a key"}
    ]


def test_alerts_are_created_checked_tested_edited_and_keep_their_query(member: Member) -> None:
    b = member.base
    form = {
        "name": "too many orders",
        "target": f"{member.query_id}|COUNT",
        "operation": ">",
        "value": "3",
        "frequency": "1m",
        "window": "1h",
        "enabled": "on",
    }
    refused = member.post(f"{b}/alerts", **{**form, "webhooks": "http://127.0.0.1/hook"})
    assert refused.status_code == 400
    assert "destinations[0].url" in refused.text
    created = member.post(f"{b}/alerts", **form)
    assert created.status_code == 303
    page = created.headers["location"]
    alert_id = re.fullmatch(rf"{b}/alerts/(\w+)", page)
    assert alert_id
    shown = member.get(page).text
    assert "shown only this once" in shown and "ll_ws_" in shown

    deadline = time.monotonic() + 20
    while 'id="alert-data"' not in (text := member.get(page).text):  # its first check
        assert time.monotonic() < deadline, "the new alert was not checked"
        time.sleep(0.5)
    assert '<span class="state state-alarm">ALARM</span>' in text
    assert '"threshold": 3' in text  # the chart's line
    assert "ALARM" in member.get(f"{b}/alerts").text

    tested = member.post(f"{page}/test")
    assert tested.status_code == 303 and "no destination to notify" in member.get(page).text
    edited = member.post(page, **{**form, "value": "1000"})
    assert edited.status_code == 303
    assert "COUNT &gt; 1000" in member.get(page).text

    kept = member.post(f"{b}/queries/{member.query_id}/delete")
    assert kept.status_code == 303 and kept.headers["location"] == f"{b}/queries"
    assert "used by the alert &#39;too many orders&#39;" in member.get(f"{b}/queries").text
    link = member.get(f"/alerts/{alert_id.group(1)}")
    assert link.status_code == 303 and link.headers["location"] == page

    assert member.post(f"{page}/delete").status_code == 303
    assert member.get(page).status_code == 404


def test_an_alert_not_checked_yet_says_so_and_claims_no_state(member: Member) -> None:
    """Stored as OK from its creation (the API's ``state``, with ``last_checked_at``
    null), an alert never checked is not shown as OK: no check found it so."""
    b = member.base
    # Off: the evaluator claims only enabled alerts, so it stays unchecked for the test.
    form = {"name": "quiet", "target": f"{member.query_id}|COUNT", "operation": ">", "value": "9"}
    page = member.post(f"{b}/alerts", **form).headers["location"]
    shown = member.get(page).text
    heading = re.search(r"<h1>quiet (.*?)</h1>", shown)
    assert heading and heading.group(1) == (
        '<span class="state state-pending">Not checked yet</span>'
    )
    assert "not yet" in shown  # its "Last checked"
    row = re.search(
        rf'<td>(.*?)</td>\s*<td><a href="{page}">quiet</a>', member.get(f"{b}/alerts").text
    )
    assert row and row.group(1) == (
        '<span class="state state-pending">Not checked yet</span> <span class="muted">off</span>'
    )
    assert member.post(f"{page}/delete").status_code == 303


def test_an_alerts_history_writes_its_values_as_the_console_writes_numbers(
    server: LiveServer,
) -> None:
    """At most three decimals and thousands separators (``number_text``), not the
    float's repr: "us-west-2 178.79952639999996" read as noise."""
    tenant = server.new_tenant()
    m = member_of(server, tenant)
    now = int(time.time() * 1000)
    events = [
        {"timestamp": now, "region": "us-west-2", "duration": 178.79952639999996},
        {"timestamp": now, "region": "eu-west-1", "duration": 1234567.25},
    ]
    assert server.send(tenant.ingest_key, "latency", events).status_code == 202
    query = web.post(
        f"{server.url}/v1/queries",
        json={
            "name": "slowest",
            "calculations": [{"operator": "MAX", "key": "duration"}],
            "group_bys": [{"key": "region"}],
        },
        headers={"Authorization": tenant.admin_key},
        timeout=30,
    ).json()["query"]["id"]
    form = {
        "name": "slow regions",
        "target": f"{query}|MAX(duration)",
        "operation": ">",
        "value": "1000000",
        "window": "1h",
        "enabled": "on",
    }
    created = m.post(f"{m.base}/alerts", **form)
    assert created.status_code == 303, created.text
    page = created.headers["location"]
    deadline = time.monotonic() + 20
    while 'id="alert-data"' not in (text := m.get(page).text):  # its first check
        assert time.monotonic() < deadline, "the new alert was not checked"
        time.sleep(0.5)
    assert "region=us-west-2 <strong>178.8</strong>" in text
    assert "region=eu-west-1 <strong>1,234,567.25</strong>" in text
    assert "178.799526" not in text.split('id="alert-data"')[1].split("</script>", 1)[1]
    m.browser.close()


# The builder's script starts runs with this and reads the JSON answer: no form posts it,
# so no reload can send it again.
SCRIPT_POSTS = {"/env/{environment_id}/query/run", "/env/{environment_id}/query/bubble_up"}


def console_posts() -> set[str]:
    return {
        route.path
        for module in PAGE_MODULES
        for route in module.router.routes
        if isinstance(route, APIRoute) and "POST" in route.methods
    }


def test_every_console_form_answers_with_a_redirect(server: LiveServer, tmp_path: Path) -> None:
    """POST, redirect, GET (303): reloading the page a form led to never sends it again."""
    tenant = server.new_tenant()
    m = member_of(server, tenant)
    b = m.base
    answered: dict[str, httpx.Response] = {}

    def post(template: str, path: str, **fields: Any) -> httpx.Response:
        answered[template] = answer = m.post(path, **fields)
        return answer

    email, password = new_user(server, tenant.workspace_id)
    other = Browser(server)
    answered["/login"] = other.login(email, password)
    integration = register(server, tmp_path)
    consent = other.consent(other.authorize_url(integration))
    answered["/oauth/authorize"] = approved = other.decide(consent)
    code = query_of(approved.headers["location"])["code"]
    assert exchange(server, integration, code).status_code == 200  # installed
    [uninstall] = [
        f for f in parse_page(other.client.get("/").text).forms if "/uninstall" in f.action
    ]
    answered["/installations/{installation_id}/uninstall"] = other.client.post(
        uninstall.action, data=dict(uninstall.fields)
    )
    other.close()

    envs = "/workspaces/{workspace_id}/environments"
    post(envs, envs.format(workspace_id=tenant.workspace_id), name=uuid.uuid4().hex[:6])
    created_key = post("/env/{environment_id}/keys", f"{b}/keys", kind="admin")
    assert created_key.headers["location"] == f"{b}/keys"
    key_id = re.findall(r"/keys/(\w+)/revoke", m.get(f"{b}/keys").text)[-1]
    post("/env/{environment_id}/keys/{key_id}/revoke", f"{b}/keys/{key_id}/revoke")
    post("/env/{environment_id}/redaction", f"{b}/redaction", redact="on")
    saved = post("/env/{environment_id}/queries", f"{b}/queries", name="n", builder="co=COUNT")
    query_id = parse_qs(urlsplit(saved.headers["location"]).query)["saved"][0]
    update = "/env/{environment_id}/queries/{query_id}"
    post(update, f"{b}/queries/{query_id}", name="n2", builder="co=COUNT")
    form = {"name": "a", "target": f"{m.query_id}|COUNT", "operation": ">", "value": "9"}
    created = post("/env/{environment_id}/alerts", f"{b}/alerts", **form)
    alert = created.headers["location"]
    alert_id = alert.rsplit("/", 1)[1]
    assert alert == f"{b}/alerts/{alert_id}"
    post("/env/{environment_id}/alerts/{alert_id}", alert, **form)
    post("/env/{environment_id}/alerts/{alert_id}/test", f"{alert}/test")
    post("/env/{environment_id}/alerts/{alert_id}/delete", f"{alert}/delete")
    boards = "/env/{environment_id}/boards"
    board = post(boards, f"{b}/boards", name="wall").headers["location"].split("?")[0]
    board_id = board.rsplit("/", 1)[1]
    panel = {"query_id": query_id, "visualization": "line", "width": "2", "range": "1h"}
    post("/env/{environment_id}/board_panels", f"{b}/board_panels", board=board_id, **panel)
    shown = web.get(
        f"{server.url}/v1/boards/{board_id}", headers={"Authorization": tenant.admin_key}
    )
    [panel_id] = [p["id"] for p in shown.json()["board"]["panels"]]
    panels = boards + "/{board_id}/panels/{panel_id}"
    at = f"{board}/panels/{panel_id}"
    post(panels + "/move", f"{at}/move", direction="later", range="1h")
    post(panels + "/width", f"{at}/width", width="3", range="1h")
    post(panels + "/delete", f"{at}/delete", range="1h")
    post(boards + "/{board_id}", board, name="wall 2", range="1h")
    post(boards + "/{board_id}/delete", f"{board}/delete")
    post("/env/{environment_id}/queries/{query_id}/delete", f"{b}/queries/{query_id}/delete")
    post("/logout", "/logout")
    m.browser.close()

    assert set(answered) == console_posts() - SCRIPT_POSTS
    statuses = {template: answer.status_code for template, answer in answered.items()}
    assert statuses == dict.fromkeys(answered, 303)
    for answer in answered.values():
        assert "ll_sk_" not in answer.headers["location"]
        assert "ll_ws_" not in answer.headers["location"]


def test_a_refused_form_leads_back_to_its_page_which_says_why_once(
    server: LiveServer, tmp_path: Path
) -> None:
    """A form the server refuses answers 303 too, to the page it was on, which shows the
    reason to this session once: answered with the refusal itself, the browser stayed on
    the form's address (``.../delete``), where a reload sent the form again."""
    tenant = server.new_tenant()
    m = member_of(server, tenant)
    b = m.base

    form = {"name": "watcher", "target": f"{m.query_id}|COUNT", "operation": ">", "value": "9"}
    assert m.post(f"{b}/alerts", **form).status_code == 303
    deleted = m.post(f"{b}/queries/{m.query_id}/delete")
    assert deleted.status_code == 303 and deleted.headers["location"] == f"{b}/queries"
    listed = m.get(f"{b}/queries").text
    assert "the query is used by the alert &#39;watcher&#39;" in listed
    assert "used by the alert" not in m.get(f"{b}/queries").text  # reloaded: said once
    assert f"/queries/{m.query_id}/delete" in listed  # still there

    board = m.post(f"{b}/boards", name="wall").headers["location"].split("?")[0]
    board_id = board.rsplit("/", 1)[1]
    panel = {"query_id": m.query_id, "visualization": "line", "width": "2", "range": "1h"}
    assert m.post(f"{b}/board_panels", board=board_id, **panel).status_code == 303
    shown = web.get(
        f"{server.url}/v1/boards/{board_id}", headers={"Authorization": tenant.admin_key}
    )
    [panel_id] = [p["id"] for p in shown.json()["board"]["panels"]]
    at = f"{board}/panels/{panel_id}"
    assert m.post(f"{at}/delete", range="1h").status_code == 303
    for action, fields in [
        ("delete", {}),
        ("move", {"direction": "later"}),
        ("width", {"width": "3"}),
    ]:
        # Another tab removed the panel first.
        again = m.post(f"{at}/{action}", range="1h", **fields)
        assert again.status_code == 303 and again.headers["location"] == f"{board}?range=1h"
        assert "that panel is no longer on this board" in m.get(again.headers["location"]).text
        assert "no longer on this board" not in m.get(f"{board}?range=1h").text

    email, password = new_user(server, tenant.workspace_id)
    other = Browser(server)
    assert other.login(email, password).status_code == 303
    integration = register(server, tmp_path)
    approved = other.decide(other.consent(other.authorize_url(integration)))
    code = query_of(approved.headers["location"])["code"]
    assert exchange(server, integration, code).status_code == 200  # installed, with its key
    other.close()
    with server.meta.session() as s:
        [key_id] = s.scalars(
            select(ApiKey.id).where(
                ApiKey.environment_id == tenant.environment_id, ApiKey.installation_id.is_not(None)
            )
        )
    revoked = m.post(f"{b}/keys/{key_id}/revoke")
    assert revoked.status_code == 303 and revoked.headers["location"] == f"{b}/keys"
    assert "belongs to an installed integration: uninstall it instead" in m.get(f"{b}/keys").text
    assert "belongs to an installed integration" not in m.get(f"{b}/keys").text
    m.browser.close()


def secrets_on(page: httpx.Response) -> list[str]:
    """The whole admin keys and webhook secrets a page shows."""
    return re.findall(r"ll_(?:sk|ws)_[\w-]{43}", page.text)


def test_a_new_secret_is_shown_once_and_only_to_the_session_that_made_it(
    server: LiveServer,
) -> None:
    tenant = server.new_tenant()
    m = member_of(server, tenant)
    same_user = Browser(server)
    email, password = new_user(server, tenant.workspace_id)
    assert same_user.login(email, password).status_code == 303
    keys = f"{m.base}/keys"
    try:
        created = m.post(keys, kind="admin", name="once")
        assert created.status_code == 303 and created.headers["location"] == keys
        # Another session of the workspace views the page first: it sees no secret, and
        # takes nothing from the session that made it.
        assert secrets_on(same_user.client.get(keys)) == []
        [key] = secrets_on(m.get(keys))
        assert secrets_on(m.get(keys)) == []  # reloaded: gone
        assert web.get(
            f"{server.url}/v1/datasets", headers={"Authorization": key}, timeout=30
        ).is_success

        form = {"name": "a", "target": f"{m.query_id}|COUNT", "operation": ">", "value": "9"}
        alert = m.post(f"{m.base}/alerts", **form).headers["location"]
        assert secrets_on(same_user.client.get(alert)) == []
        [secret] = secrets_on(m.get(alert))
        assert secret.startswith("ll_ws_")
        assert secrets_on(m.get(alert)) == []
        tested = m.post(f"{alert}/test")
        assert tested.status_code == 303 and tested.headers["location"] == alert
        assert "no destination to notify" in m.get(alert).text
        assert "no destination to notify" not in m.get(alert).text
    finally:
        same_user.close()
        m.browser.close()


def test_numbers_no_page_can_read_are_a_400_or_ignored_never_a_500(member: Member) -> None:
    """``²`` passes ``str.isdigit`` and ``int`` refuses it, as it refuses more than
    4,300 digits, and inf and nan have no integer: each answered 500."""
    base, event = member.base, member.event
    squared, long = "\u00b2", "9" * 5000
    refused = [
        member.get(f"{base}/events", **{"from": squared, "to": "\u00b3"}),
        member.get(f"{base}/events", **{"from": long, "to": long}),
        member.get(f"{base}/query", nt="dataset", nv="orders", limit=squared),
    ]
    assert [r.status_code for r in refused] == [400, 400, 400]
    assert "unix milliseconds" in refused[0].text and "limit" in refused[2].text
    ignored = [
        member.get(f"{base}/events", ds="orders", offset=squared),
        member.get(f"{base}/events", ds="orders", offset=long),
        member.get(f"{base}/events/orders/{event['_id']}", t=squared),
        member.get(f"{base}/traces/{'ab' * 16}", t=squared),
    ]
    assert [r.status_code for r in ignored] == [200, 200, 200, 200]
    headers = {"X-CSRF-Token": member.csrf, "Accept": "application/json"}
    for region in ("sf=inf&st=1", "sf=nan&st=1", "sf=1e300&st=1e300"):
        answer = member.browser.client.post(
            f"{base}/query/bubble_up",
            content=f"nt=dataset&nv=orders&range=1h&sk=duration&smin=0&smax=9&{region}",
            headers=headers,
        )
        assert answer.status_code == 400, region
        assert answer.json()["errors"][0]["field"] in ("selection.from", "selection.to")


def test_a_name_that_reorders_its_line_is_shown_with_its_marks(member: Member) -> None:
    """A key named "report\u202efdp.exe" read as "reportexe.pdf": the page shows the mark."""
    made = member.post(f"{member.base}/keys", kind="ingest", name="report\u202efdp.exe")
    assert made.status_code in (200, 303), made.text
    page = member.get(f"{member.base}/keys").text
    assert "report\\u202efdp.exe" in page and "\u202e" not in page
    # A form's value keeps the name as it is: an edit sends back the name, not its codes.
    api = web.Client(base_url=member.browser.client.base_url,
                     headers={"Authorization": member.tenant.admin_key})  # fmt: skip
    made_query = api.post("/v1/queries", json={"name": "rtl\u202ename"})
    query_id = made_query.json()["query"]["id"]
    queries = member.get(f"{member.base}/queries").text
    assert "rtl\\u202ename" in queries
    assert 'value="rtl\u202ename"' in member.get(f"{member.base}/query", saved=query_id).text
    # A delete's confirmation names what it deletes: the marks turned it around there too.
    assert "Delete the saved query rtl\\u202ename?" in confirmations(queries)
    board = {"name": "rtl\u202eboard", "panels": [{"query_id": query_id, "title": "t\u202eitle"}]}
    board_id = api.post("/v1/boards", json=board).json()["board"]["id"]
    assert "Delete the board rtl\\u202eboard? Its saved queries stay." in confirmations(
        member.get(f"{member.base}/boards").text
    )
    assert confirmations(member.get(f"{member.base}/boards/{board_id}").text) >= {
        "Remove the panel t\\u202eitle from this board? Its saved query stays.",
        "Delete the board rtl\\u202eboard? Its saved queries stay.",
    }


def confirmations(page: str) -> set[str]:
    """The sentences a page's forms ask to confirm, as the browser reads them."""
    found = {html.unescape(c) for c in re.findall(r'data-confirm="([^"]*)"', page)}
    assert found and not [c for c in found if "\u202e" in c], found
    return found
