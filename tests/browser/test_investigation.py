"""Investigating at the console: charts that zoom, heatmaps, and what sets a selection apart."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlparse

from playwright.sync_api import expect

from tests.browser.console import Console

MINUTE = 60_000


def drag(
    console: Console, selector: str, start: tuple[float, float], end: tuple[float, float]
) -> None:
    """A drag across the plot area of the chart ``selector``, as shares of its width and
    height (0 at the left and the top)."""
    area = console.page.locator(f"{selector} .u-over")
    box = area.bounding_box()
    assert box is not None
    mouse = console.page.mouse
    mouse.move(box["x"] + box["width"] * start[0], box["y"] + box["height"] * start[1])
    mouse.down()
    mouse.move(box["x"] + box["width"] * end[0], box["y"] + box["height"] * end[1], steps=8)
    mouse.up()


def test_a_drag_across_a_count_chart_zooms_the_page_to_that_range(console: Console) -> None:
    now = int(time.time() * 1000)
    events = [
        {"timestamp": now - (i + 1) * MINUTE, "service": ("api", "web")[i % 2], "n": i}
        for i in range(50)
    ]
    assert console.server.send(console.tenant.ingest_key, "zoom", events).status_code == 202
    page = console.page
    console.open(f"{console.base}/query?nt=dataset&nv=zoom&co=COUNT&g=_service&range=1h")
    expect(page.locator("[data-run-status]")).to_contain_text("2 groups")
    chart = page.locator("#series-chart")
    # Counts stack as bars; the legend reads each group's own count.
    expect(chart).to_have_attribute("data-chart", "bars")
    expect(page.locator("#result-table tbody tr")).to_have_text(["api25", "web25"])

    drag(console, "#series-chart", (0.5, 0.5), (0.75, 0.5))

    page.wait_for_url(lambda url: "from=" in url)
    params = parse_qs(urlparse(page.url).query)
    assert "range" not in params
    frm, to = int(params["from"][0]), int(params["to"][0])
    # A quarter of the hour dragged, in its second half: the run covers that alone.
    assert 10 * MINUTE <= to - frm <= 20 * MINUTE
    assert now - 35 * MINUTE <= frm <= now - 20 * MINUTE
    expected = sum(1 for e in events if frm <= e["timestamp"] < to)
    expect(page.locator("[data-run-status]")).to_contain_text("2 groups")
    counts = page.locator("#result-table tbody tr td.num")
    expect(counts).to_have_count(2)
    shown = sum(int(t) for t in counts.all_inner_texts())
    assert shown == expected and 0 < expected < len(events)
    # The query's fields stayed: a zoom changes the timeframe alone.
    assert params["co"] == ["COUNT"] and params["g"] == ["_service"]
    console.shot("zoomed-count-chart")
