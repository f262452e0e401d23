"""Investigating at the console: charts that zoom, heatmaps, and what sets a selection apart."""

from __future__ import annotations

import math
import random
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


def test_a_heatmap_keeps_the_empty_rows_between_fast_and_slow_requests(console: Console) -> None:
    """Requests of 5-100 ms and of 500-1,000 ms: the rows between the two, which hold no
    event, are drawn, so the chart shows a gap where the answer leaves its buckets out."""
    now = int(time.time() * 1000)
    rng = random.Random(3)
    durations = [rng.uniform(5, 100) for _ in range(300)] + [
        rng.uniform(500, 1000) for _ in range(60)
    ]
    events = [{"timestamp": now - rng.randrange(1, 50) * MINUTE, "duration": d} for d in durations]
    assert console.server.send(console.tenant.ingest_key, "gaps", events).status_code == 202
    page = console.page
    console.open(f"{console.base}/query?nt=dataset&nv=gaps&co=HEATMAP&ck=duration&range=1h")
    chart = page.locator("#series-chart")
    expect(chart).to_have_attribute("data-chart", "heatmap")
    # README: fine buckets of 2^(1/8), joined 2, 4, 8... at a time until at most 40 remain.
    low, high = (math.floor(math.log2(d) * 8) for d in (min(durations), max(durations)))
    width = 1
    while high // width - low // width + 1 > 40:
        width *= 2
    held = {math.floor(math.log2(d) * 8) // width for d in durations}
    rows = high // width - low // width + 1
    assert len(held) < rows - 5  # the gap: rows that hold nothing
    expect(chart).to_have_attribute("data-heatmap-rows", str(rows))
    # The table's value is a count of the events drawn, and says so.
    expect(page.locator("#result-table thead th")).to_have_text(["HEATMAP(duration): events"])
    expect(page.locator("#result-table tbody td")).to_have_text([str(len(durations))])
    console.shot("heatmap-gap")


def test_a_heatmaps_rows_fill_the_gap_above_the_smallest_numbers(console: Console) -> None:
    """The bucket of the smallest positive numbers starts at 0 (its edge underflows): the
    rows between it and the next still come back, and none between signs or past 0."""
    console.open(f"{console.base}/query")
    rows = console.page.evaluate(
        """async (held) => (await import("/console/static/js/charts.js")).heatmapRows(held)""",
        [[-8.0, -4.0], [-1.0, -0.5], [0.0, 0.0], [0.0, 2.0**-1020], [2.0**-1000, 2.0**-995]],
    )
    assert rows == [
        [-8.0, -4.0], [-4.0, -2.0], [-2.0, -1.0], [-1.0, -0.5],  # the negative gap
        [0.0, 0.0],
        [0.0, 2.0**-1020], [2.0**-1020, 2.0**-1015], [2.0**-1015, 2.0**-1010],
        [2.0**-1010, 2.0**-1005], [2.0**-1005, 2.0**-1000], [2.0**-1000, 2.0**-995],
    ]  # fmt: skip


def test_a_heatmap_region_of_slow_requests_bubbles_up_its_cause_into_a_filter(
    console: Console,
) -> None:
    """Among 2,000 requests the slow ones (500-1,000 ms) are those of eu-west-2 on the
    free plan: selecting them on the heatmap names region and plan, and a click on the
    top value filters the query to it."""
    now = int(time.time() * 1000)
    rng = random.Random(7)
    events = []
    for _ in range(2000):
        region = rng.choice(["eu-west-1", "eu-west-2", "us-east-1", "ap-south-1"])
        plan = rng.choice(["free", "pro", "team"])
        slow = region == "eu-west-2" and plan == "free"
        events.append(
            {
                "timestamp": now - rng.randrange(1, 50) * MINUTE,
                "duration": rng.uniform(500, 1000) if slow else rng.uniform(5, 100),
                "region": region,
                "plan": plan,
                "browser": rng.choice(["firefox", "chrome", "safari"]),
                "route": rng.choice(["/cart", "/pay", "/search", "/home"]),
            }
        )
    assert console.server.send(console.tenant.ingest_key, "reqs", events).status_code == 202
    page = console.page
    console.open(f"{console.base}/query?nt=dataset&nv=reqs&co=HEATMAP&ck=duration&range=1h")
    chart = page.locator("#series-chart")
    expect(chart).to_have_attribute("data-chart", "heatmap")
    rows = int(chart.get_attribute("data-heatmap-rows") or 0)
    assert rows > 10

    # The slow requests are the top rows: a drag across the whole hour over the top tenth.
    drag(console, "#series-chart", (0.01, 0.01), (0.99, 0.1))

    bubble = page.locator("[data-bubble-card]")
    expect(bubble).to_be_visible()
    dimensions = bubble.locator("li.dimension")
    expect(dimensions.first).to_be_visible()
    keys = [dimensions.nth(i).get_attribute("data-key") for i in range(2)]
    assert sorted(keys) == ["plan", "region"], keys
    top = {"region": "eu-west-2", "plan": "free"}
    first = dimensions.first.locator("a[data-filter]").first
    expect(first).to_have_text(top[str(keys[0])])
    expect(bubble.locator("[data-bubble-note]")).to_contain_text("selected events")
    console.shot("bubble-up", readme=True)

    first.click()
    page.wait_for_url(lambda url: "fk=" in url)
    params = parse_qs(urlparse(page.url).query)
    assert (params["fk"], params["fo"], params["fv"]) == ([keys[0]], ["="], [top[str(keys[0])]])
    expect(chart).to_have_attribute("data-chart", "heatmap")
