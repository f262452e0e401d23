"""Every console page in a real browser: no script error or refused inline code, usable at
1280 px and at a phone's width, and by keyboard alone (each saved as a screenshot where
LIMELIGHT_SCREENSHOTS says)."""

from __future__ import annotations

import time

from playwright.sync_api import expect

from tests import web
from tests.browser.console import Console
from tests.e2e.test_console_traces import PAY, send_shop

PHONE = {"width": 390, "height": 844}


def seed(console: Console) -> dict[str, str]:
    """Events, spans and their logs, a saved query with an alert on it: something on every
    page."""
    now = int(time.time() * 1000)
    events = [
        {
            "timestamp": now - i * 7_000,
            "message": f"GET /api/orders/{i} {'500' if i % 5 == 0 else '200'}",
            "duration": (i * 37) % 250,
            "service": ["checkout", "search", "payments"][i % 3],
            "http": {"status": 500 if i % 5 == 0 else 200},
        }
        for i in range(300)
    ]
    assert console.server.send(console.tenant.ingest_key, "logs", events).status_code == 202
    send_shop(console.server, console.tenant)
    headers = {"Authorization": console.tenant.admin_key}
    api = web.Client(base_url=console.server.url, headers=headers, timeout=30)
    query = api.post(
        "/v1/queries",
        json={
            "name": "errors by service",
            "namespaces": [{"type": "dataset", "value": "logs"}],
            "calculations": [{"operator": "COUNT"}],
            "filters": [{"key": "http.status", "operation": ">=", "value": 500}],
            "group_bys": [{"key": "_service"}],
        },
    ).json()["query"]["id"]
    alert = api.post(
        "/v1/alerts",
        json={
            "name": "errors",
            "query_id": query,
            "threshold": {"operation": ">", "value": 5},
            "window": "1h",
        },
    ).json()["alert"]["id"]
    panels = [
        {"query_id": query, "visualization": v, "width": w}
        for v, w in (("bars", 4), ("number", 1), ("line", 3), ("table", 2), ("heatmap", 2))
    ]
    board = api.post("/v1/boards", json={"name": "Ops", "panels": panels}).json()["board"]["id"]
    api.close()
    return {"query": query, "alert": alert, "board": board}


def test_every_page_works_at_desktop_and_phone_widths(console: Console) -> None:
    ids = seed(console)
    b = console.base
    pages = {
        "home": "/",
        "datasets": f"{b}/datasets",
        "dataset-keys": f"{b}/datasets/logs",
        "events": f"{b}/events?ds=logs",
        "events-filtered": f"{b}/events?ds=logs&fk=http.status&fo=%3D&fv=500&cols=duration",
        "query-saved": f"{b}/query?saved={ids['query']}",
        # Rows of three fields and a button, and a long key: wider than a phone once.
        "query-rows": f"{b}/query?nt=dataset&nv=otel&co=P95&ck=duration&co=COUNT"
        "&fk=kind&fo=%3D&fv=SERVER&g=attributes.cloud.region",
        "boards": f"{b}/boards",
        "board": f"{b}/boards/{ids['board']}",
        "traces-latest": f"{b}/traces",
        "traces-slowest": f"{b}/traces?services=checkout&orderBy=duration&fk=kind&fo=%3D&fv=SERVER",
        "trace-with-logs": f"{b}/traces/{PAY.hex()}",
        "services-all": f"{b}/services",
        "service-checkout": f"{b}/services/checkout",
        "alerts": f"{b}/alerts",
        "alert-new": f"{b}/alerts/new",
        "alert": f"{b}/alerts/{ids['alert']}",
    }
    page = console.page
    deadline = time.monotonic() + 20
    while "alert-data" not in console.open(pages["alert"]).text():  # its first check
        assert time.monotonic() < deadline
        page.wait_for_timeout(500)
    for name, path in pages.items():
        assert console.open(path).status == 200, path
        page.wait_for_load_state("networkidle")
        console.shot(name, readme=name in ("events", "alert"))
    expect(page.locator("#alert-chart canvas")).to_have_count(1)

    page.set_viewport_size(PHONE)
    for name, path in pages.items():
        console.open(path)
        page.wait_for_load_state("networkidle")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"{name} is wider than a phone: {width}px"
        # Each span's service and name whole: beside its bar a phone clipped the name.
        clipped = page.eval_on_selector_all(
            ".span-label", "labels => labels.filter(l => l.scrollWidth > l.clientWidth + 1).length"
        )
        assert clipped == 0, f"{name}: {clipped} span names clipped"
        # The current section's tab is on the screen, though the tabs are wider than it.
        tab = page.locator("nav.sections a[aria-current=page]")
        if tab.count():
            box = tab.bounding_box()
            assert (
                box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
            ), f"{name}: its tab is off the screen at {box}"
        if name == "events":  # the fields are under the events: a link leads down to them
            page.get_by_role("link", name="Fields ↓").click()
            expect(page.get_by_role("complementary", name="Fields")).to_be_in_viewport()
        if name in ("events", "query-saved", "alert", "board", "traces-latest", "service-checkout"):
            console.shot(f"{name}-phone")


def test_the_explorer_is_usable_with_the_keyboard_alone(console: Console) -> None:
    seed(console)
    page = console.page
    console.open(f"{console.base}/events?ds=logs")
    page.keyboard.press("Tab")  # the skip link comes first
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.get_by_label("Search", exact=True).focus()
    page.keyboard.type("orders/42 ")
    page.keyboard.press("Enter")
    expect(page.locator("table[data-events] tbody tr")).to_have_count(1)
    page.wait_for_load_state()  # the page's scripts are running

    page.keyboard.press("j")  # to the first event
    first = page.locator("table[data-events] td.when a").first  # the event's time
    expect(first).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("pre.json")).to_contain_text("GET /api/orders/42 200")

    page.go_back()
    page.get_by_label("Timeframe").focus()
    page.keyboard.press("End")  # the last option: Custom…
    expect(page.get_by_label("From")).to_be_visible()


def test_the_api_docs_are_interactive_under_the_pages_policy(console: Console) -> None:
    """/docs draws every API from /openapi.json with the vendored Swagger UI, and a call
    made from it reaches the server; no script or style is refused by the policy."""
    page = console.page
    console.open("/docs")
    for tag in ("events", "otlp", "queries", "query runs", "alerts", "datasets", "oauth"):
        expect(page.locator(f"#operations-tag-{tag.replace(' ', '_')}")).to_be_visible()
    expect(page.locator(".opblock-summary-path", has_text="/events/v1/{dataset}")).to_be_visible()
    page.locator("#operations-operations-get_health").click()
    page.get_by_role("button", name="Try it out").click()
    page.get_by_role("button", name="Execute").click()
    expect(page.locator(".live-responses-table tbody .response-col_status")).to_have_text("200")
    expect(page.locator(".live-responses-table")).to_contain_text('"status": "ok"')
    console.shot("api-docs")
