"""The console's Traces and Services pages and a trace's page with its logs, over HTTP
against a live server fed over OTLP/HTTP."""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from tests import web
from tests.e2e.oauth_support import Browser, new_user, post_forms
from tests.support import LiveServer, Tenant
from tests.unit.ingest.otlp_builders import kvs, logs, span, traces

MS = 1_000_000  # ns
T0_MS = (int(time.time() * 1000) // 1000) * 1000 - 600_000  # ten minutes ago
T0 = T0_MS * MS
PAY = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")
CART = bytes.fromhex("1bf7651916cd43dd8448eb211c80319c")
FIND = bytes.fromhex("2cf7651916cd43dd8448eb211c80319c")
CRON = bytes.fromhex("3df7651916cd43dd8448eb211c80319c")
ROOT, CHARGE, QUERY, CART_ROOT, FIND_ROOT, CRON_ROOT = (
    bytes.fromhex(f"00f067aa0ba902b{i}") for i in range(6)
)
STACK = 'Traceback (most recent call last):\n  File "pay.py", line 12, in charge\nCardDeclined'


def send(server: LiveServer, tenant: Tenant, path: str, body: bytes, dataset: str = "") -> None:
    headers = {"x-api-key": tenant.ingest_key, "content-type": "application/x-protobuf"}
    if dataset:
        headers["x-dataset"] = dataset
    answer = web.post(f"{server.url}/otel/v1/{path}", content=body, headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text


def send_spans(server: LiveServer, tenant: Tenant, service: str, spans: list[Span]) -> None:
    send(server, tenant, "traces", traces(spans, {"service.name": service}).SerializeToString())


def failed(s: Span, message: str) -> Span:
    s.status.code = Status.STATUS_CODE_ERROR
    event = s.events.add(name="exception", time_unix_nano=s.end_time_unix_nano)
    event.attributes.extend(
        kvs(
            {
                "exception.type": "CardDeclined",
                "exception.message": message,
                "exception.stacktrace": STACK,
            }
        )
    )
    return s


def log(message: str, trace_id: bytes, span_id: bytes | None, at_ms: int) -> LogRecord:
    record = LogRecord(time_unix_nano=at_ms * MS, trace_id=trace_id, severity_text="INFO")
    record.body.string_value = message
    if span_id:
        record.span_id = span_id
    return record


def send_shop(server: LiveServer, tenant: Tenant) -> None:
    """PAY (100 ms): gateway's root over checkout's failing charge and its query; CART
    (30 ms) and FIND (250 ms), one span each; CRON, a job of a service named with a slash
    and no entry span. Logs of PAY: one written in the charge (dataset otel, beside the
    spans), one of no span (dataset app-logs)."""
    server_kind = Span.SPAN_KIND_SERVER
    send_spans(server, tenant, "gateway", [
        span("POST /pay", trace_id=PAY, span_id=ROOT, start=T0, end=T0 + 100 * MS,
             kind=server_kind),
    ])  # fmt: skip
    send_spans(server, tenant, "checkout", [
        failed(span("charge", trace_id=PAY, span_id=CHARGE, parent_span_id=ROOT,
                    start=T0 + 10 * MS, end=T0 + 70 * MS, kind=server_kind), "card declined"),
        span("SELECT cards", trace_id=PAY, span_id=QUERY, parent_span_id=CHARGE,
             start=T0 + 20 * MS, end=T0 + 40 * MS, kind=Span.SPAN_KIND_CLIENT),
        span("GET /cart", trace_id=CART, span_id=CART_ROOT, start=T0 + 60_000 * MS,
             end=T0 + 60_030 * MS, kind=server_kind),
    ])  # fmt: skip
    send_spans(server, tenant, "search", [
        span("GET /search", trace_id=FIND, span_id=FIND_ROOT, start=T0 + 120_000 * MS,
             end=T0 + 120_250 * MS, kind=server_kind),
    ])  # fmt: skip
    send_spans(server, tenant, "ops/cron", [
        span("nightly", trace_id=CRON, span_id=CRON_ROOT, start=T0 + 180_000 * MS,
             end=T0 + 180_005 * MS, kind=Span.SPAN_KIND_INTERNAL),
    ])  # fmt: skip
    in_span = logs(
        [log("charging card 4242", PAY, CHARGE, T0_MS + 15)], {"service.name": "checkout"}
    )
    send(server, tenant, "logs", in_span.SerializeToString())
    no_span = logs([log("payment started", PAY, None, T0_MS + 1)], {"service.name": "gateway"})
    send(server, tenant, "logs", no_span.SerializeToString(), dataset="app-logs")


@dataclass
class Member:
    tenant: Tenant
    browser: Browser

    @property
    def base(self) -> str:
        return f"/env/{self.tenant.environment_id}"

    def get(self, path: str, **params: Any) -> Any:
        return self.browser.client.get(path, params=params or None)


def member_of(server: LiveServer, tenant: Tenant) -> Member:
    email, password = new_user(server, tenant.workspace_id)
    browser = Browser(server)
    assert browser.login(email, password).status_code == 303
    assert post_forms(browser.client.get("/").text, "/logout")
    return Member(tenant, browser)


@pytest.fixture(scope="module")
def shop(server: LiveServer) -> Iterator[Member]:
    tenant = server.new_tenant()
    send_shop(server, tenant)
    m = member_of(server, tenant)
    yield m
    m.browser.close()


@pytest.fixture(scope="module")
def stranger(server: LiveServer) -> Iterator[Member]:
    """A user of another workspace, with spans of its own."""
    tenant = server.new_tenant()
    send_spans(server, tenant, "theirs", [span("GET /x", start=T0, end=T0 + MS)])
    m = member_of(server, tenant)
    yield m
    m.browser.close()


def listed_traces(page: str) -> list[str]:
    """The trace ids the Traces page lists, in its order."""
    return re.findall(r'<td class="when"><a href="/env/\w+/traces/([0-9a-f]{32})\?t=', page)


def json_block(page: str, block: str) -> Any:
    found = re.search(rf'<script type="application/json" id="{block}">(.*?)</script>', page, re.S)
    assert found, block
    return json.loads(html.unescape(found.group(1)))


def rows_of(page: str, table: str) -> list[list[str]]:
    """The text of each cell of each body row of the table marked ``data-<table>``."""
    found = re.search(rf"<table[^>]* data-{table}>.*?<tbody>(.*?)</tbody>", page, re.S)
    assert found, table
    return [
        [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", c)).split()) for c in cells]
        for cells in (
            re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", found.group(1), re.S)
        )
    ]


def test_the_traces_page_lists_the_latest_traces_and_sorts_them_by_duration(
    shop: Member,
) -> None:
    page = shop.get(f"{shop.base}/traces")
    assert page.status_code == 200, page.text
    assert listed_traces(page.text) == [CRON.hex(), FIND.hex(), CART.hex(), PAY.hex()]
    points = json_block(page.text, "trace-points")["points"]
    assert [(p["value"], p["error"]) for p in points] == [
        (5, False), (250, False), (30, False), (100, True)
    ]  # fmt: skip
    assert points[3]["href"] == f"{shop.base}/traces/{PAY.hex()}?t={T0_MS}"

    slowest = shop.get(f"{shop.base}/traces", services="checkout", orderBy="duration")
    assert listed_traces(slowest.text) == [PAY.hex(), CART.hex()]
    [pay, cart] = rows_of(slowest.text, "traces")
    assert pay[1:5] == ["gateway POST /pay", "100 ms", "3", "1"]
    assert cart[1:5] == ["checkout GET /cart", "30 ms", "1", "0"]
    # The column headers keep the search and change the order alone.
    b = shop.base
    assert f'<a href="{b}/traces?ds=otel&amp;services=checkout&amp;range=1h">Start</a>' in (
        slowest.text
    )
    assert (
        f'aria-sort="descending"><a href="{b}/traces?ds=otel&amp;services=checkout'
        '&amp;orderBy=duration&amp;range=1h">Duration</a>'
    ) in slowest.text

    failing = shop.get(
        f"{shop.base}/traces", status="error", fk="error", fo="=", fv="card declined"
    )
    assert listed_traces(failing.text) == [PAY.hex()]
    ranged = shop.get(f"{shop.base}/traces", min="40", max="200", name="GET /search")
    assert listed_traces(ranged.text) == []
    assert "No trace matches" in ranged.text


def test_past_a_page_of_traces_the_next_page_lists_the_rest(server: LiveServer) -> None:
    """150 traces a second apart, of durations all different, and 150 more that all start
    in one millisecond and last as long: newest or slowest first, the page of 100 links
    to the next, which lists the rest of them once each (ties too) and links back."""
    tenant = server.new_tenant()
    ids = [bytes([0x40 + i // 256, i % 256]) + bytes(14) for i in range(150)]
    spans = [
        span(
            f"GET /{i}", trace_id=t, start=T0 + i * 1000 * MS, end=T0 + (i * 1000 + 3 + 7 * i) * MS
        )
        for i, t in enumerate(ids)
    ]
    tied = [bytes([0x60 + i // 256, i % 256]) + bytes(14) for i in range(150)]
    spans += [span("GET /tied", trace_id=t, start=T0 - 5000 * MS, end=T0 - 4998 * MS) for t in tied]
    send_spans(server, tenant, "web", spans)
    member = member_of(server, tenant)
    try:
        for order, search in (
            ("start", {"name": "GET /tied"}),
            ("duration", {"name": "GET /tied"}),
            ("start", {"min": "3"}),
            ("duration", {"min": "3"}),
        ):
            first = member.get(f"{member.base}/traces", orderBy=order, range="24h", **search)
            listed = listed_traces(first.text)
            found = re.search(r'<a href="([^"]+)" data-next-page>', first.text)
            assert found and len(listed) == 100, (order, search)
            second = member.get(html.unescape(found.group(1)))
            assert second.status_code == 200, second.text
            more = listed_traces(second.text)
            assert "data-next-page" not in second.text  # 150: the last page
            assert "Traces 101–150" in second.text
            expected = tied if search.get("name") else ids
            assert sorted(listed + more) == sorted(t.hex() for t in expected), (order, search)
            if not search.get("name"):  # in the order asked: the latest or slowest first
                assert listed + more == [t.hex() for t in ids[::-1]]
            back = re.search(r'<a href="([^"]+)" data-newer-page>', second.text)
            assert back, order
            assert listed_traces(member.get(html.unescape(back.group(1))).text) == listed
    finally:
        member.browser.close()


def test_a_bad_search_names_the_field_and_keeps_the_form(shop: Member) -> None:
    for params, field in [
        ({"min": "fast"}, "minDuration"),
        ({"min": "90", "max": "10"}, "minDuration"),
        ({"status": "broken"}, "status"),
        ({"fk": "duration", "fo": "~~", "fv": "1"}, "filters[0].operation"),
        ({"orderBy": "name"}, "orderBy"),
        ({"ds": "no such/dataset"}, "dataset"),
    ]:
        page = shop.get(f"{shop.base}/traces", services="checkout", **params)
        assert page.status_code == 400, (params, page.text[:300])
        assert f"<code>{field}</code>" in page.text, params
        assert 'value="checkout"' in page.text  # what was typed stays in the form
    bad_id = shop.get(f"{shop.base}/traces", trace_id="not-an-id")
    assert bad_id.status_code == 400 and "32 hexadecimal characters" in bad_id.text
    opened = shop.get(f"{shop.base}/traces", trace_id=PAY.hex().upper())
    assert opened.status_code == 303
    assert opened.headers["location"] == f"{shop.base}/traces/{PAY.hex()}"


def test_the_services_page_shows_each_services_figures_and_series(shop: Member) -> None:
    page = shop.get(f"{shop.base}/services")
    assert page.status_code == 200, page.text
    rows = rows_of(page.text, "services")
    assert [r[:5] for r in rows] == [
        ["checkout", "2", "1", "50%", "45 ms"],
        ["gateway", "1", "0", "0%", "100 ms"],
        ["ops/cron", "1", "0", "0%", "5 ms"],
        ["search", "1", "0", "0%", "250 ms"],
    ]
    assert f'href="{shop.base}/services/ops%2Fcron?ds=otel&amp;range=1h"' in page.text
    series = json_block(page.text, "service-series")
    assert [sum(r["requests"]) for r in series["rows"]] == [2, 1, 1, 1]
    assert [sum(r["errors"]) for r in series["rows"]] == [1, 0, 0, 0]
    assert len(series["times"]) == len(series["rows"][0]["requests"]) > 1
    assert shop.get(f"{shop.base}/services/ops%2Fcron").status_code == 200
    empty = shop.get(f"{shop.base}/services", ds="elsewhere")
    assert empty.status_code == 200 and "No span of <strong>elsewhere</strong>" in empty.text


def test_a_services_page_lists_its_operations_slowest_traces_and_errors(shop: Member) -> None:
    page = shop.get(f"{shop.base}/services/checkout")
    assert page.status_code == 200, page.text
    operations = rows_of(page.text, "operations")
    assert [r[:4] for r in operations] == [
        ["GET /cart", "1", "0", "0%"],
        ["charge", "1", "1", "100%"],
    ]
    assert [r[2] for r in rows_of(page.text, "slowest")] == ["100 ms", "30 ms"]
    # Each operation leads to its own slowest traces.
    table = page.text[page.text.index("data-operations") :]
    cart = re.search(r'<a href="([^"]+)" title="its slowest traces">GET /cart</a>', table)
    assert cart, "no link to GET /cart's traces"
    assert listed_traces(shop.get(html.unescape(cart.group(1))).text) == [CART.hex()]
    assert parse_qs(urlsplit(html.unescape(cart.group(1))).query)["orderBy"] == ["duration"]
    [error] = rows_of(page.text, "errors")
    assert error[:2] == ["card declined", "1"] and error[3] == "charge"
    # Errors of inner spans are listed where the figures count requests: the page says so.
    assert "Every failed span of checkout, inner ones included" in page.text
    links = re.findall(
        r'<a href="([^"]+)">Traces with this error</a> · <a href="([^"]+)">', page.text
    )
    [(with_error, latest)] = [(html.unescape(a), html.unescape(b)) for a, b in links]
    assert latest == f"{shop.base}/traces/{PAY.hex()}?t={T0_MS + 10}"
    assert listed_traces(shop.get(with_error).text) == [PAY.hex()]
    assert parse_qs(urlsplit(with_error).query)["fv"] == ["card declined"]
    # The service's chart, then one per operation.
    series = json_block(page.text, "service-series")
    assert [sum(r["requests"]) for r in series["rows"]] == [2, 1, 1]
    unknown = shop.get(f"{shop.base}/services/nobody")
    assert unknown.status_code == 200 and "No request of <strong>nobody</strong>" in unknown.text


def test_a_trace_shows_its_logs_beside_their_spans_its_exceptions_and_a_legend(
    shop: Member,
) -> None:
    page = shop.get(f"{shop.base}/traces/{PAY.hex()}", t=str(T0_MS))
    assert page.status_code == 200, page.text
    text = page.text
    # Three spans: the log record written in the charge is not one.
    assert re.findall(r'<span class="span-name">([^<]+)</span>', text) == [
        "POST /pay", "charge", "SELECT cards"
    ]  # fmt: skip
    legend = re.search(r'<ul class="legend"[^>]*>(.*?)</ul>', text, re.S)
    assert legend and re.findall(r'svc-(\d+)"></span>(\w+)', legend.group(1)) == [
        ("0", "checkout"), ("1", "gateway")
    ]  # fmt: skip
    assert 'class="span-bar svc-1"' in text and text.count('class="span-bar svc-0"') == 2
    charge = text.split(f'id="span-{CHARGE.hex()}"')[1].split("</details>")[0]
    assert "CardDeclined</strong>: card declined" in charge
    assert STACK in html.unescape(charge)
    assert "Logs of this span" in charge and "charging card 4242" in charge
    events = rows_of(text, "trace-events")
    assert [(r[2], r[3]) for r in events] == [
        ("—", "payment started"),
        ("charge", "charging card 4242"),
    ]
    # The charge's logs in each dataset the trace's logs are in, filtered by both ids.
    links = re.findall(r'<a href="([^"]+)">Events of this span in ([\w-]+)</a>', charge)
    assert [ds for _, ds in links] == ["app-logs", "otel"]
    otel_logs = html.unescape(links[1][0])
    query = parse_qs(urlsplit(otel_logs).query)
    assert query["fk"] == ["traceId", "spanId"] and query["fv"] == [PAY.hex(), CHARGE.hex()]
    explorer = shop.get(otel_logs)
    assert explorer.status_code == 200
    # The span's own event carries both ids too.
    assert "charging card 4242" in explorer.text and "1–2 of 2 events" in explorer.text


def test_a_trace_id_that_is_no_trace_id_is_listed_without_a_link(
    server: LiveServer, shop: Member
) -> None:
    """A span sent to the Events API carries whatever text its sender wrote as its trace
    id: the page never makes a link of it."""
    tenant = server.new_tenant()
    forged = {"traceId": "../../keys", "spanId": "a" * 16, "kind": "SERVER", "name": "<b>x</b>"}
    assert server.send(tenant.ingest_key, "otel", [forged]).status_code == 202
    m = member_of(server, tenant)
    page = m.get(f"{m.base}/traces")
    assert page.status_code == 200
    [row] = rows_of(page.text, "traces")
    assert row[1] == "default <b>x</b>"  # listed, its name as text
    assert "<b>x</b>" not in page.text and "../../keys" not in page.text
    assert listed_traces(page.text) == [] and "/traces/." not in page.text
    points = json_block(page.text, "trace-points")["points"]
    assert [p["href"] for p in points] == [None]
    m.browser.close()


def test_another_workspaces_user_gets_404_for_every_traces_and_services_page(
    shop: Member, stranger: Member
) -> None:
    for path in [
        f"{shop.base}/traces",
        f"{shop.base}/traces?services=checkout&orderBy=duration",
        f"{shop.base}/traces/{PAY.hex()}",
        f"{shop.base}/services",
        f"{shop.base}/services/checkout",
    ]:
        assert shop.get(path).status_code == 200, path
        answer = stranger.get(path)
        assert answer.status_code == 404, path
        assert "checkout" not in answer.text and "card declined" not in answer.text
    # In their own environment, none of the shop's services or traces.
    theirs = stranger.get(f"{stranger.base}/services").text
    assert [r[0] for r in rows_of(theirs, "services")] == ["theirs"]
    assert PAY.hex() not in stranger.get(f"{stranger.base}/traces").text
