"""What a person does at the console, end to end in a real browser on a live server."""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, set_span_in_context
from playwright.sync_api import Browser, expect

from tests import web
from tests.browser.console import Console
from tests.e2e.oauth_support import new_user
from tests.support import LiveServer

MS = 1_000_000


def rows(console: Console) -> Any:
    return console.page.locator("table[data-events] tbody tr")


def shown(value: float) -> str:
    """A number as every chart and table of the console shows it (en-US: thousands
    separated, at most three decimals)."""
    return f"{value:,.3f}".rstrip("0").rstrip(".")


def p99(values: list[float]) -> float:
    """numpy's default percentile: linear interpolation between closest ranks."""
    ordered = sorted(values)
    rank = 0.99 * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def test_find_an_event_by_free_text_open_its_detail_and_filter(console: Console) -> None:
    needle = f"needle-{uuid.uuid4().hex[:8]}"
    now = int(time.time() * 1000)
    events = [
        {
            "timestamp": now - i * 1000,
            "message": f"order {i} {'failed' if i % 2 else 'placed'}"
            + (f" {needle}" if i == 7 else ""),
            "http": {"status": 500 if i % 2 else 200},
            "service": "checkout" if i < 6 else "search",
        }
        for i in range(12)
    ]
    assert console.server.send(console.tenant.ingest_key, "shop", events).status_code == 202
    page = console.page

    page.get_by_role("link", name="prod", exact=True).click()  # the environment's events
    expect(page.get_by_label("Dataset")).to_have_value("shop")
    expect(rows(console)).to_have_count(12)
    console.shot("events")

    page.get_by_label("Search", exact=True).fill(needle)
    page.get_by_label("Search", exact=True).press("Enter")
    expect(rows(console)).to_have_count(1)
    expect(rows(console).first).to_contain_text(f"order 7 failed {needle}")
    assert f"q={needle}" in page.url

    rows(console).first.get_by_role("link").click()
    expect(page.get_by_role("heading", name="Event", exact=True)).to_be_visible()
    detail = page.locator("pre.json")
    expect(detail).to_contain_text(needle)
    expect(detail).to_contain_text('"_dataset": "shop"')
    expect(detail).to_contain_text('"_service": "search"')
    console.shot("event")

    # Back to the page it was opened from: the search is still there.
    page.get_by_role("link", name="Events of shop (filtered)").click()
    expect(rows(console)).to_have_count(1)
    page.get_by_label("Search", exact=True).fill("")
    page.get_by_text("Filters and columns").click()
    page.get_by_label("Filter key").first.fill("http.status")
    page.get_by_label("Operation").first.select_option("=")
    page.get_by_label("Value").first.fill("500")
    page.get_by_label("Columns").fill("http.status")
    page.get_by_role("button", name="Search").click()
    expect(rows(console)).to_have_count(6)
    for cell in rows(console).locator("td:nth-child(4)").all():
        expect(cell).to_have_text("500")
    expect(page.get_by_role("status").first).to_contain_text("1–6 of 6 events")


def test_live_tail_shows_new_events_until_paused(console: Console) -> None:
    send = console.server.send
    key = console.tenant.ingest_key
    assert send(key, "tail", [{"message": "before the tail"}]).status_code == 202
    page = console.page
    console.open(f"{console.base}/events?ds=tail")
    expect(rows(console)).to_have_count(1)

    page.get_by_role("button", name="Live tail").click()
    expect(page.locator("[data-tail-state]")).to_have_text("Live: waiting for new events…")
    assert send(key, "tail", [{"message": "arrived while watching"}]).status_code == 202
    expect(rows(console).first).to_contain_text("arrived while watching")
    expect(page.locator("[data-tail-state]")).to_have_text("Live: 1 new event")
    console.shot("events-live-tail")

    page.get_by_role("button", name="Pause").click()
    expect(page.locator("[data-tail-state]")).to_have_text("Paused.")
    assert send(key, "tail", [{"message": "arrived while paused"}]).status_code == 202
    page.wait_for_timeout(5000)  # more than two looks of a running tail
    expect(rows(console)).to_have_count(2)

    page.get_by_role("button", name="Live tail").click()  # resumes where it stopped
    expect(rows(console).first).to_contain_text("arrived while paused")
    expect(rows(console)).to_have_count(3)


def test_p99_of_duration_by_service_charted_saved_and_reopened(console: Console) -> None:
    now = int(time.time() * 1000)
    durations = {
        "checkout": [float(10 * i) for i in range(1, 11)],
        "payments": [5.0, 7.5, 250.0],
        "search": [1.0, 2.0, 3.0, 4.0],
    }
    events = [
        {"timestamp": now - 60_000 * (i + 1), "service": service, "duration": d}
        for service, values in durations.items()
        for i, d in enumerate(values)
    ]
    assert console.server.send(console.tenant.ingest_key, "perf", events).status_code == 202
    page = console.page

    page.get_by_role("link", name="prod", exact=True).click()
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Query").click()
    page.get_by_label("Namespace value").fill("perf")
    page.get_by_label("Calculation", exact=True).first.select_option("P99")
    page.get_by_label("Calculation key").first.fill("duration")
    page.get_by_label("Group by key").first.fill("_service")
    page.get_by_role("button", name="Run").click()

    expect(page.locator("[data-run-status]")).to_contain_text("3 groups")
    assert "co=P99" in page.url and "ck=duration" in page.url and "g=_service" in page.url
    legend = page.locator(".u-legend .u-series th")
    expect(legend).to_have_text(["Time", "payments", "checkout", "search"])  # largest first
    expect(page.locator("#series-chart canvas")).to_have_count(1)
    table = page.locator("#result-table tbody tr")
    expect(table).to_have_text(
        [f"{s}{shown(p99(durations[s]))}" for s in ("payments", "checkout", "search")]
    )
    console.shot("query-builder", readme=True)

    page.get_by_label("Name", exact=True).fill("p99 by service")
    page.get_by_role("button", name="Save query").click()
    expect(page.get_by_role("heading", name="p99 by service")).to_be_visible()

    page.get_by_role("navigation", name="Sections").get_by_role(
        "link", name="Saved queries"
    ).click()
    console.shot("saved-queries")
    page.get_by_role("link", name="p99 by service").first.click()
    expect(page.get_by_label("Namespace value")).to_have_value("perf")
    expect(page.locator("[data-run-status]")).to_contain_text("3 groups")
    expect(legend).to_have_text(["Time", "payments", "checkout", "search"])


def test_a_trace_sent_with_the_opentelemetry_sdk_opens_as_nested_spans(console: Console) -> None:
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "shop-api"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("shop")
    start = time.time_ns() - 2_000 * MS
    root = tracer.start_span("POST /orders", kind=SpanKind.SERVER, start_time=start)
    charge = tracer.start_span(
        "charge card", context=set_span_in_context(root), start_time=start + 5 * MS
    )
    query = tracer.start_span(
        "SELECT orders",
        context=set_span_in_context(charge),
        start_time=start + 8 * MS,
        attributes={"db.system": "postgresql"},
    )
    query.end(end_time=start + 20 * MS)
    charge.end(end_time=start + 30 * MS)
    root.end(end_time=start + 45 * MS)
    provider.shutdown()
    exporter = OTLPSpanExporter(
        endpoint=f"{console.server.url}/otel/v1/traces",
        headers={"x-api-key": console.tenant.ingest_key},
        timeout=20,
    )
    assert exporter.export(list(memory.get_finished_spans())).name == "SUCCESS"
    exporter.shutdown()
    trace_id = f"{root.get_span_context().trace_id:032x}"
    page = console.page

    console.open(f"{console.base}/events?ds=otel")
    span_row = rows(console).filter(has_text="charge card")
    expect(span_row.get_by_role("link", name="trace")).to_have_attribute(
        "href", re.compile(f"/traces/{trace_id}")
    )
    span_row.get_by_role("link").first.click()
    page.get_by_role("link", name=f"View trace {trace_id}").click()

    spans = page.locator("details.span")
    expect(spans).to_have_count(3)
    expect(spans.locator(".span-name")).to_have_text(
        ["POST /orders", "charge card", "SELECT orders"]
    )
    assert [s.get_attribute("data-depth") for s in spans.all()] == ["0", "1", "2"]
    expect(spans.locator(".span-duration")).to_have_text(["45.00 ms", "25.00 ms", "12.00 ms"])
    spans.nth(2).locator("summary").click()
    expect(spans.nth(2).locator(".span-detail")).to_contain_text("postgresql")
    console.shot("trace", readme=True)

    console.open(f"{console.base}/traces")
    page.get_by_label("Trace id").fill(trace_id.upper())
    page.get_by_role("button", name="Open trace").click()
    expect(spans).to_have_count(3)


def test_an_admin_key_is_shown_once_and_refused_once_revoked(console: Console) -> None:
    page = console.page
    page.get_by_role("link", name="prod", exact=True).click()
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Keys").click()
    page.get_by_label("Kind").select_option("admin")
    page.get_by_label("Name", exact=True).fill("ci")
    page.get_by_role("button", name="Create key").click()
    expect(page.get_by_role("heading", name="Your new admin key")).to_be_visible()
    key = page.locator("#new-key").inner_text().strip()
    assert key.startswith("ll_sk_")
    console.shot("keys")

    def datasets_api() -> int:
        url = f"{console.server.url}/v1/datasets"
        return web.get(url, headers={"Authorization": key}, timeout=30).status_code

    assert datasets_api() == 200
    console.open(f"{console.base}/keys")
    assert key not in page.content()  # shown once: never again
    row = page.locator("tbody tr").filter(has=page.get_by_role("cell", name="ci", exact=True))
    expect(row).to_contain_text(f"ll_sk_…{key[-4:]}")

    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Revoke").click()
    expect(row).to_contain_text("revoked")
    assert datasets_api() == 401


def test_reloading_after_creating_a_key_or_an_alert_creates_nothing_and_shows_no_secret(
    console: Console,
) -> None:
    """Each form answers with a redirect: the page it leads to shows the new secret once,
    and a reload asks for that page again rather than sending the form again."""
    page = console.page
    headers = {"Authorization": console.tenant.admin_key}
    server = console.server
    saved = web.post(
        f"{server.url}/v1/queries",
        json={"name": "orders", "calculations": [{"operator": "COUNT"}]},
        headers=headers,
        timeout=30,
    )
    assert saved.status_code == 200, saved.text
    name = f"key-{uuid.uuid4().hex[:8]}"

    def rows_named(text: str) -> Any:
        return page.locator("tbody tr").filter(has=page.get_by_role("cell", name=text, exact=True))

    console.open(f"{console.base}/keys")
    page.get_by_label("Kind").select_option("admin")
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_role("button", name="Create key").click()
    expect(page.get_by_role("heading", name="Your new admin key")).to_be_visible()
    key = page.locator("#new-key").inner_text().strip()
    assert key.startswith("ll_sk_") and key not in page.url
    assert page.url == f"{server.url}{console.base}/keys"
    page.reload()
    expect(rows_named(name)).to_have_count(1)
    expect(page.get_by_role("heading", name="Your new admin key")).to_have_count(0)
    assert key not in page.content()

    console.open(f"{console.base}/alerts/new")
    page.get_by_label("Name", exact=True).fill("orders piling up")
    page.get_by_label("Value").fill("1000")
    page.get_by_role("button", name="Create alert").click()
    expect(page.get_by_role("heading", name="Alert created")).to_be_visible()
    secret = page.locator("#webhook-secret").inner_text().strip()
    assert secret.startswith("ll_ws_") and secret not in page.url
    page.reload()
    expect(page.get_by_role("heading", name="orders piling up")).to_be_visible()
    expect(page.get_by_role("heading", name="Alert created")).to_have_count(0)
    assert secret not in page.content()

    listed = web.get(f"{server.url}/v1/alerts", headers=headers, timeout=30).json()["alerts"]
    assert [a["name"] for a in listed] == ["orders piling up"]
    keys = console.server.cli_json("keys", "list", "--environment", console.tenant.environment_id)
    assert [k["name"] for k in keys].count(name) == 1


def test_a_user_of_another_workspace_gets_404_for_every_page(
    console: Console, server: LiveServer, chromium: Browser
) -> None:
    assert server.send(console.tenant.ingest_key, "private", [{"message": "mine"}]).status_code
    saved = web.post(
        f"{server.url}/v1/queries",
        json={"name": "mine", "calculations": [{"operator": "COUNT"}]},
        headers={"Authorization": console.tenant.admin_key},
        timeout=30,
    ).json()["query"]["id"]
    [event] = server.read(console.tenant.admin_key, "private")
    base = console.base
    pages = [
        f"{base}/events",
        f"{base}/events?ds=private",
        f"{base}/events/private/{event['_id']}?t={event['_timestamp']}",
        f"{base}/datasets",
        f"{base}/datasets/private",
        f"{base}/query",
        f"{base}/query?saved={saved}",
        f"{base}/queries",
        f"{base}/traces",
        f"{base}/services",
        f"{base}/services/default",
        f"{base}/keys",
        f"{base}/alerts",
        f"{base}/alerts/new",
    ]
    for path in pages:  # the owner sees each
        assert console.open(path).status == 200, path

    stranger_tenant = server.new_tenant()
    email, password = new_user(server, stranger_tenant.workspace_id)
    context = chromium.new_context()
    stranger = Console(server, stranger_tenant, context.new_page(), console.shots)
    stranger.log_in(email, password)
    for path in pages:
        answer = stranger.open(path)
        assert answer.status == 404, path
        expect(stranger.page.get_by_role("alert")).to_contain_text("There is no such page")
        assert "mine" not in stranger.page.content()
    stranger.shot("not-found")
    context.close()
