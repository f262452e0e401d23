"""A board built from the builder in a real browser, and zoomed by a drag on a chart."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import expect

from tests import web
from tests.browser.console import Console

MINUTE = 60_000


def test_a_board_built_from_the_builder_zooms_every_panel_by_a_drag(console: Console) -> None:
    now = int(time.time() * 1000)
    # 3 orders 50 minutes ago and 2 in the last 5 minutes: the last hour holds 5, its last
    # quarter 2.
    events = [{"timestamp": now - 50 * MINUTE - i * 1000, "item": "old"} for i in range(3)]
    events += [{"timestamp": now - 5 * MINUTE - i * 1000, "item": "new"} for i in range(2)]
    assert console.server.send(console.tenant.ingest_key, "shop", events).status_code == 202
    page = console.page

    console.open(f"{console.base}/query")
    page.get_by_label("Namespace value").fill("shop")
    page.get_by_label("Calculation", exact=True).first.select_option("COUNT")
    page.get_by_role("button", name="Run").click()
    expect(page.locator("[data-run-status]")).to_contain_text("1 group")
    page.get_by_label("Name", exact=True).fill("orders")
    page.get_by_role("button", name="Save query").click()
    expect(page.get_by_role("heading", name="orders")).to_be_visible()

    # Add to a new board, as bars across the grid.
    page.get_by_label("Board", exact=True).select_option(label="A new board…")
    page.get_by_label("New board's name").fill("Shop")
    page.get_by_label("Visualization").select_option("bars")
    page.get_by_label("Width").select_option("4")
    page.get_by_role("button", name="Add to board").click()
    expect(page.get_by_role("heading", name="Shop board")).to_be_visible()
    builder = page.url

    # A second panel of the same query, on the same board, as one number.
    page.go_back()
    expect(page.get_by_role("heading", name="orders")).to_be_visible()
    page.get_by_label("Board", exact=True).select_option(label="Shop")
    page.get_by_label("Panel title").fill("Orders")
    page.get_by_label("Visualization").select_option("number")
    page.get_by_label("Width").select_option("1")
    page.get_by_role("button", name="Add to board").click()
    expect(page.get_by_role("heading", name="Shop board")).to_be_visible()
    assert page.url == builder

    # The board is in the navigation's Boards page.
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Boards").click()
    page.get_by_role("link", name="Shop").click()

    chart = page.locator("section[aria-label='orders'] [data-panel-chart]")
    number = page.locator("section[aria-label='Orders'] [data-panel-number]")
    expect(chart.locator("canvas")).to_have_count(1)
    expect(number).to_have_text("5")
    opened = page.locator("section[aria-label='orders']").get_by_role(
        "link", name="Open in builder"
    )
    assert "saved=" in (opened.get_attribute("href") or "")
    console.shot("board", readme=True)

    # Drag across the last quarter of the hour on the bars: the board zooms to it.
    area = chart.locator(".u-over")
    box = area.bounding_box()
    assert box is not None
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.75, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.9, y, steps=5)
    page.mouse.move(box["x"] + box["width"] - 1, y, steps=5)
    page.mouse.up()

    page.wait_for_url("**from=**")
    params = parse_qs(urlsplit(page.url).query)
    assert "range" not in params
    frm, to = int(params["from"][0]), int(params["to"][0])
    assert now - 20 * MINUTE < frm < now - 10 * MINUTE and to > now - MINUTE
    # Every panel ran again over the range: the number counts the 2 recent orders only.
    expect(number).to_have_text("2")
    expect(chart.locator("canvas")).to_have_count(1)
    expect(page.locator("[data-board-window]")).to_contain_text("Custom")


def test_each_panel_draws_its_querys_first_calculation(console: Console) -> None:
    """The query's first calculation, whatever its name: the page's JSON has its keys
    sorted, and a number panel of MAX(duration), COUNT showed the COUNT."""
    now = int(time.time() * 1000)
    events = [{"timestamp": now - i * 1000, "duration": d} for i, d in enumerate((250, 40, 90))]
    assert console.server.send(console.tenant.ingest_key, "shop", events).status_code == 202
    api = web.Client(
        base_url=console.server.url, headers={"Authorization": console.tenant.admin_key}
    )
    query = {
        "name": "slowest",
        "calculations": [{"operator": "MAX", "key": "duration"}, {"operator": "COUNT"}],
    }
    query_id = api.post("/v1/queries", json=query).json()["query"]["id"]
    panels = [
        {"query_id": query_id, "title": "Slowest", "visualization": "number", "width": 1},
        {"query_id": query_id, "title": "Both", "visualization": "table", "width": 3},
    ]
    board = api.post("/v1/boards", json={"name": "Order", "panels": panels}).json()["board"]
    console.open(f"{console.base}/boards/{board['id']}")
    expect(console.page.locator("section[aria-label='Slowest'] [data-panel-number]")).to_have_text(
        "250"
    )
    headers = console.page.locator("section[aria-label='Both'] th")
    expect(headers).to_have_text(["MAX(duration)", "COUNT"])
    console.assert_no_page_errors()
