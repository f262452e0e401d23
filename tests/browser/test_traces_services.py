"""Investigating with traces at the console: the slowest trace of a service, a service's
errors, each followed to its trace, with spans sent by the OpenTelemetry SDK."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import parse_qs, urlparse

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Tracer, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, set_span_in_context
from playwright.sync_api import expect

from tests.browser.console import Console
from tests.browser.test_investigation import drag

MS = 1_000_000  # ns


class CardDeclined(Exception):
    pass


@contextmanager
def tracer_of(console: Console, service: str) -> Iterator[Tracer]:
    """A tracer of ``service`` whose spans are sent to the console's server when done."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    yield provider.get_tracer("shop")
    provider.shutdown()
    exporter = OTLPSpanExporter(
        endpoint=f"{console.server.url}/otel/v1/traces",
        headers={"x-api-key": console.tenant.ingest_key},
        timeout=20,
    )
    assert exporter.export(list(memory.get_finished_spans())).name == "SUCCESS"
    exporter.shutdown()


def request(
    tracer: Tracer,
    name: str,
    start: int,
    ms: float,
    parent: Span | None = None,
    failed: bool = False,
) -> Span:
    """A SERVER span of ``ms`` milliseconds from ``start`` (ns), ended."""
    context = set_span_in_context(parent) if parent is not None else None
    span = tracer.start_span(name, context=context, kind=SpanKind.SERVER, start_time=start)
    if failed:
        span.set_status(Status(StatusCode.ERROR, "out of stock"))
    span.end(end_time=start + int(ms * MS))
    return span


def trace_id(span: Span) -> str:
    return f"{span.get_span_context().trace_id:032x}"


def test_find_the_slowest_trace_of_a_service_from_the_traces_page_and_open_it(
    console: Console,
) -> None:
    t0 = time.time_ns() - 20 * 60_000 * MS
    with tracer_of(console, "gateway") as gateway, tracer_of(console, "checkout") as checkout:
        # The slowest trace through checkout starts at the gateway, which calls checkout.
        root = gateway.start_span("POST /orders", kind=SpanKind.SERVER, start_time=t0)
        request(checkout, "POST /checkout", t0 + 5 * MS, 470, parent=root)
        root.end(end_time=t0 + 480 * MS)
        for i, ms in enumerate((30, 120, 65)):
            request(checkout, f"GET /cart/{i}", t0 + (i + 1) * 60_000 * MS, ms)
    with tracer_of(console, "search") as search:
        request(search, "GET /search", t0 + 30_000 * MS, 900)  # slower, of another service
    slowest = trace_id(root)
    page = console.page

    page.get_by_role("link", name="prod", exact=True).click()
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Traces").click()
    rows = page.locator("table[data-traces] tbody tr")
    expect(rows).to_have_count(5)  # the latest first, at once
    expect(rows.first.locator("td.root")).to_contain_text("GET /cart/2")

    page.get_by_label("Services").fill("checkout")
    page.get_by_role("button", name="Search").click()
    expect(rows).to_have_count(4)
    page.get_by_role("link", name="Duration", exact=True).click()
    expect(rows.locator("td:nth-child(3)")).to_have_text(["480 ms", "120 ms", "65 ms", "30 ms"])
    assert parse_qs(urlparse(page.url).query)["orderBy"] == ["duration"]
    expect(rows.first.locator("td.root")).to_have_text("gateway POST /orders")
    expect(page.locator("#trace-scatter canvas")).to_have_count(1)
    console.shot("traces", readme=True)

    # The slowest trace's point, at the top of the scatter, opens it too.
    chart = json.loads(page.locator("#trace-points").text_content() or "{}")
    point = next(p for p in chart["points"] if p["value"] == 480)
    box = page.locator("#trace-scatter .u-over").bounding_box()
    assert box is not None
    (frm, to) = chart["span"]
    x = box["x"] + box["width"] * (point["time"] - frm) / (to - frm)
    y = box["y"] + box["height"] * (1 - 1 / 1.1)  # the y scale runs to 1.1 times the slowest
    page.mouse.click(x, y)
    page.wait_for_url(f"**/traces/{slowest}?t=*")
    spans = page.locator("details.span")
    expect(spans.locator(".span-name")).to_have_text(["POST /orders", "POST /checkout"])
    page.go_back()

    rows.first.get_by_role("link").click()
    page.wait_for_url(f"**/traces/{slowest}?t=*")
    expect(spans).to_have_count(2)
    expect(spans.first.locator(".span-name")).to_have_text("POST /orders")
    assert [s.get_attribute("data-depth") for s in spans.all()] == ["0", "1"]
    expect(spans.locator(".span-duration")).to_have_text(["480.00 ms", "470.00 ms"])
    expect(page.get_by_role("list", name="Services")).to_contain_text("checkout")


def test_a_services_errors_lead_to_the_trace_that_failed(console: Console) -> None:
    t0 = time.time_ns() - 20 * 60_000 * MS
    with tracer_of(console, "payments") as payments:
        for i, ms in enumerate((12, 18)):
            request(payments, "POST /pay", t0 + i * 60_000 * MS, ms)
        failing = payments.start_span(
            "POST /refund", kind=SpanKind.SERVER, start_time=t0 + 5 * 60_000 * MS
        )
        try:
            raise CardDeclined("card declined")
        except CardDeclined as exc:  # recorded as the SDK records one: with its traceback
            failing.record_exception(exc)
        failing.set_status(Status(StatusCode.ERROR))
        failing.end(end_time=t0 + 5 * 60_000 * MS + 40 * MS)
    # Others, busier: a fuller picture beside the service looked at.
    start = time.time_ns() - 50 * 60_000 * MS
    with tracer_of(console, "search") as search, tracer_of(console, "inventory") as inventory:
        for i in range(40):
            request(search, "GET /search", start + i * 71_000 * MS, 5 + i % 7)
            if i % 3 == 0:
                at = start + i * 73_000 * MS
                request(inventory, "GET /stock", at, 20 + i, failed=i % 9 == 0)
    page = console.page

    console.open(f"{console.base}/events")
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Services").click()
    row = page.locator("table[data-services] tbody tr").filter(has_text="payments")
    expect(row.locator("td")).to_have_count(8)
    expect(row.locator("td.num")).to_have_text(
        ["3", "1", "33.333%", "18 ms", "37.8 ms", "39.56 ms"]
    )
    expect(page.locator("table[data-services] [data-series] canvas")).to_have_count(3)
    console.shot("services", readme=True)

    row.get_by_role("link", name="payments").click()
    expect(page.get_by_role("heading", name="payments")).to_be_visible()
    operations = page.locator("table[data-operations] tbody tr")
    expect(operations.locator("td:first-child")).to_have_text(["POST /pay", "POST /refund"])
    error = page.locator("table[data-errors] tbody tr")
    expect(error).to_have_count(1)
    expect(error.locator("td.message")).to_have_text("card declined")
    console.shot("service")

    error.get_by_role("link", name="Traces with this error").click()
    traces = page.locator("table[data-traces] tbody tr")
    expect(traces).to_have_count(1)
    expect(traces.locator("td.root")).to_have_text("payments POST /refund")
    traces.first.get_by_role("link").click()
    span = page.locator("details.span")
    expect(span).to_have_count(1)
    span.locator("summary").click()
    expect(span.locator(".exception")).to_contain_text("CardDeclined: card declined")
    expect(span.locator(".exception pre.stack")).to_contain_text("Traceback")

    # A drag across the service's chart zooms its page to the range dragged.
    page.go_back()
    page.go_back()
    expect(page.locator("#service-chart canvas")).to_have_count(1)
    drag(console, "#service-chart", (0.2, 0.5), (0.9, 0.5))
    page.wait_for_url(lambda url: "from=" in url)
    params = parse_qs(urlparse(page.url).query)
    assert "range" not in params and int(params["from"][0]) < int(params["to"][0])
    expect(page.get_by_role("heading", name="payments")).to_be_visible()
