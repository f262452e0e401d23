"""Investigating on the Events page in a real browser: a value of the field sidebar, or of
an event's detail, clicked into a filter that narrows the list to it."""

from __future__ import annotations

import time
from urllib.parse import parse_qsl, urlsplit

from playwright.sync_api import Locator, expect

from tests.browser.console import Console


def seed(console: Console) -> None:
    now = int(time.time() * 1000)
    levels = ["error"] * 4 + ["warn"] * 6 + ["info"] * 30
    events = [
        {
            # 30 in the last 10 minutes, 10 more 30 to 40 minutes ago.
            "timestamp": now - 5_000 - i * 20_000 - (20 * 60_000 if i >= 30 else 0),
            "level": level,
            "message": f"GET /orders/{i} {'failed' if level == 'error' else 'done'}",
            "http": {"status": 500 if level == "error" else 200, "route": "/orders/:id"},
            "service": "checkout" if i % 2 else "search",
        }
        for i, level in enumerate(levels)
    ]
    assert console.server.send(console.tenant.ingest_key, "app", events).status_code == 202


def rows(console: Console) -> Locator:
    return console.page.locator("table[data-events] tbody tr")


def test_click_a_value_in_the_sidebar_into_a_filter(console: Console) -> None:
    seed(console)
    page = console.page
    console.open(f"{console.base}/events?ds=app")
    expect(rows(console)).to_have_count(40)
    # Levels at a glance: a Level column, error rows coloured, the histogram stacked.
    expect(page.locator("table[data-events] thead th").nth(1)).to_have_text("Level")
    expect(page.locator("table[data-events] tr.level-error")).to_have_count(4)
    expect(page.locator("#histogram .u-legend")).to_contain_text("error")

    sidebar = page.get_by_role("complementary", name="Fields")
    sidebar.get_by_role("link", name="level", exact=True).click()
    values = sidebar.locator(".field-values")
    expect(values.locator("tr:not(.share-bar)")).to_have_count(3)
    expect(values).to_contain_text("75%")  # info: 30 of 40
    assert ("open", "level") in parse_qsl(urlsplit(page.url).query)  # a reload keeps it
    console.shot("events-sidebar", readme=True)

    values.get_by_role("link", name="error", exact=True).click()
    expect(rows(console)).to_have_count(4)
    for text in rows(console).locator("td.level").all_inner_texts():
        assert text == "error"
    expect(page.get_by_role("status").first).to_contain_text("of 4 events")
    # The filter is a row of the form, and the sidebar shows the one value left.
    query = parse_qsl(urlsplit(page.url).query)
    filters = [p for p in query if p[0] in ("fk", "fo", "fv")]
    assert filters == [("fk", "level"), ("fo", "="), ("fv", "error")]
    expect(page.get_by_label("Filter key").first).to_have_value("level")
    expect(sidebar.locator(".field-values")).to_contain_text("100%")

    # != from the sidebar: leaving out the one value left leaves nothing.
    sidebar.get_by_role("link", name="Leave out error").click()
    expect(page.get_by_role("status").first).to_contain_text("No events match")

    # Changing the dataset or the timeframe applies at once.
    console.open(f"{console.base}/events?ds=app&range=1h")
    page.get_by_label("Timeframe").select_option("15m")
    page.wait_for_url(lambda url: "range=15m" in url)
    expect(rows(console)).to_have_count(30)


def test_click_a_value_in_an_events_detail_into_a_filter(console: Console) -> None:
    seed(console)
    page = console.page
    console.open(f"{console.base}/events?ds=app&fk=level&fo=%3D&fv=error")
    expect(rows(console)).to_have_count(4)
    rows(console).first.locator("td.when a").first.click()
    expect(page.get_by_role("heading", name="Event", exact=True)).to_be_visible()
    fields = page.locator("table[data-event-fields]")
    expect(fields.locator("tr[data-field='http.status'] td.value")).to_have_text("500")
    service = fields.locator("tr[data-field='_service'] td.value").inner_text()
    console.shot("event-detail")

    page.get_by_role("link", name="Filter _service = this value").click()
    # Back on the page it came from, narrowed by one more filter.
    expect(rows(console)).to_have_count(2)
    for text in rows(console).locator("td:nth-child(3)").all_inner_texts():
        assert text == service
    filters = [p for p in parse_qsl(urlsplit(page.url).query) if p[0] in ("fk", "fv")]
    assert filters == [("fk", "level"), ("fv", "error"), ("fk", "_service"), ("fv", service)]

    # The breadcrumb of an event leads back to the filtered page.
    rows(console).first.locator("td.when a").first.click()
    page.get_by_role("link", name="Events of app (filtered)").click()
    expect(rows(console)).to_have_count(2)
