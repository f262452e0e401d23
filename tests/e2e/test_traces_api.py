"""Trace search and the service overview against a real server, fed over OTLP/HTTP."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

import httpx
import orjson
import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from limelight.auth.api_keys import mint_key
from limelight.auth.key_owners import admin_key_owner
from limelight.store.meta import repos
from tests import web
from tests.support import LiveServer, Tenant
from tests.unit.ingest.otlp_builders import span, traces

MS = 1_000_000  # ns
T0_MS = (int(time.time() * 1000) // 1000) * 1000 - 600_000  # ten minutes ago, a whole second
T0 = T0_MS * MS
PAY = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")
ORPHAN = bytes.fromhex("4bf92f3577b34da6a3ce929d0e0e4736")
ROOT, CHARGE, QUERY, LOST = (bytes.fromhex(f"00f067aa0ba902b{i}") for i in range(4))
FRAME = {"from": T0_MS - 60_000, "to": T0_MS + 60_000}


def _error(s: Span, message: str) -> Span:
    s.status.code = Status.STATUS_CODE_ERROR
    s.status.message = message
    return s


def send_spans(server: LiveServer, tenant: Tenant, resource: str, spans: list[Span]) -> None:
    body = traces(spans, {"service.name": resource}).SerializeToString()
    r = web.post(
        f"{server.url}/otel/v1/traces",
        content=body,
        headers={"x-api-key": tenant.ingest_key, "content-type": "application/x-protobuf"},
        timeout=30,
    )
    assert r.status_code == 200, r.text


def send_shop(server: LiveServer, tenant: Tenant) -> None:
    """Trace PAY: gateway's root (100 ms) over checkout's failing charge (60 ms) and its
    query (20.5 ms); trace ORPHAN: a checkout span whose parent was never received."""
    send_spans(
        server,
        tenant,
        "gateway",
        [span("POST /pay", trace_id=PAY, span_id=ROOT, start=T0, end=T0 + 100 * MS,
              kind=Span.SPAN_KIND_SERVER)],
    )  # fmt: skip
    send_spans(
        server,
        tenant,
        "checkout",
        [
            _error(span("charge", trace_id=PAY, span_id=CHARGE, parent_span_id=ROOT,
                        start=T0 + 10 * MS, end=T0 + 70 * MS, kind=Span.SPAN_KIND_SERVER),
                   "card declined"),
            span("SELECT cards", trace_id=PAY, span_id=QUERY, parent_span_id=CHARGE,
                 start=T0 + 20 * MS, end=T0 + 40 * MS + 500_000, kind=Span.SPAN_KIND_CLIENT,
                 attributes={"db.system": "postgresql"}),
            span("refund", trace_id=ORPHAN, span_id=LOST, parent_span_id=ROOT,
                 start=T0 + 5_000 * MS, end=T0 + 5_003 * MS, kind=Span.SPAN_KIND_SERVER),
        ],
    )  # fmt: skip


PAY_TRACE = {
    "traceId": PAY.hex(),
    "start": T0_MS,
    "duration": 100,
    "rootService": "gateway",
    "rootName": "POST /pay",
    "spans": 3,
    "errors": 1,
    "services": ["checkout", "gateway"],
}
ORPHAN_TRACE = {
    "traceId": ORPHAN.hex(),
    "start": T0_MS + 5_000,
    "duration": 3,
    "rootService": None,
    "rootName": None,
    "spans": 1,
    "errors": 0,
    "services": ["checkout"],
}


def second_environment(server: LiveServer, tenant: Tenant) -> Tenant:
    """Another environment of the tenant's workspace, with its own keys."""
    with server.meta.session(immediate=True) as s:
        ws = repos.find_workspace(s, tenant.workspace_id)
        env = repos.create_environment(s, ws, "staging", redact=True)
        owner = admin_key_owner(s, ws, None)
        ingest = mint_key(s, env, "ingest").value
        admin = mint_key(s, env, "admin", user_id=owner.id).value
        return Tenant(ws.id, env.id, ingest, admin, owner.id)


def search(server: LiveServer, key: str | None, body: Any) -> httpx.Response:
    headers = {"Authorization": key} if key else {}
    content = body if isinstance(body, bytes) else orjson.dumps(body)
    return web.post(f"{server.url}/v1/traces/search", content=content, headers=headers, timeout=30)


def get(server: LiveServer, key: str | None, path: str, **params: Any) -> httpx.Response:
    headers = {"Authorization": key} if key else {}
    return web.get(f"{server.url}{path}", params=params, headers=headers, timeout=30)


@pytest.fixture(scope="module")
def shop(server: LiveServer) -> tuple[Tenant, Tenant]:
    """A tenant with the shop's traces, and another environment of its workspace that
    holds the same trace ids with other spans."""
    tenant = server.new_tenant()
    send_shop(server, tenant)
    staging = second_environment(server, tenant)
    send_spans(
        server,
        staging,
        "staging-api",
        [_error(span("GET /health", trace_id=PAY, span_id=ROOT, start=T0, end=T0 + 900 * MS,
                     kind=Span.SPAN_KIND_SERVER), "down")],
    )  # fmt: skip
    return tenant, staging


def test_traces_are_found_newest_or_slowest_first_with_their_figures(
    server: LiveServer, shop: tuple[Tenant, Tenant]
) -> None:
    tenant, _ = shop
    found = search(server, tenant.admin_key, FRAME)
    assert found.status_code == 200, found.text
    assert found.json() == {"traces": [ORPHAN_TRACE, PAY_TRACE]}

    slowest = search(server, tenant.admin_key, {**FRAME, "orderBy": "duration", "limit": 1})
    assert slowest.json() == {"traces": [PAY_TRACE]}
    # One span must match every condition: checkout's failing span is the charge.
    for body, expected in [
        ({"status": "error"}, [PAY_TRACE]),
        ({"services": ["checkout"], "name": "charge", "status": "error"}, [PAY_TRACE]),
        ({"services": ["gateway"], "status": "error"}, []),
        ({"name": "SELECT cards", "status": "ok"}, [PAY_TRACE]),
        ({"filters": [{"key": "attributes.db.system", "operation": "=", "value": "postgresql"}]},
         [PAY_TRACE]),
        ({"minDuration": 50}, [PAY_TRACE]),
        ({"maxDuration": 99.5}, [ORPHAN_TRACE]),
        ({"dataset": "elsewhere"}, []),
    ]:  # fmt: skip
        answer = search(server, tenant.admin_key, {**FRAME, **body})
        assert answer.status_code == 200, (body, answer.text)
        assert answer.json() == {"traces": expected}, body
    # A timeframe that holds only the charge and its query: the trace as it holds it.
    cut = search(server, tenant.admin_key, {"from": T0_MS + 10, "to": T0_MS + 1_000})
    assert cut.json()["traces"] == [
        {**PAY_TRACE, "start": T0_MS + 10, "duration": 60, "rootService": None,
         "rootName": None, "spans": 2, "services": ["checkout"]}
    ]  # fmt: skip


def test_a_second_environment_of_the_workspace_sees_only_its_own_spans(
    server: LiveServer, shop: tuple[Tenant, Tenant]
) -> None:
    tenant, staging = shop
    theirs = search(server, staging.admin_key, FRAME).json()["traces"]
    assert theirs == [
        {"traceId": PAY.hex(), "start": T0_MS, "duration": 900, "rootService": "staging-api",
         "rootName": "GET /health", "spans": 1, "errors": 1, "services": ["staging-api"]}
    ]  # fmt: skip
    overview = get(server, staging.admin_key, "/v1/services", **FRAME).json()
    assert [s["service"] for s in overview["services"]] == ["staging-api"]
    assert get(server, staging.admin_key, "/v1/services/checkout/errors", **FRAME).json() == {
        "service": "checkout",
        "errors": [],
    }
    stranger = server.new_tenant()
    assert search(server, stranger.admin_key, FRAME).json() == {"traces": []}
    assert get(server, stranger.admin_key, "/v1/services", **FRAME).json() == {"services": []}
    # The shop's own answers hold none of staging's spans.
    mine = get(server, tenant.admin_key, "/v1/services", **FRAME).json()["services"]
    assert [s["service"] for s in mine] == ["checkout", "gateway"]


def test_the_service_overview_counts_entry_spans(
    server: LiveServer, shop: tuple[Tenant, Tenant]
) -> None:
    tenant, _ = shop
    answer = get(server, tenant.admin_key, "/v1/services", **FRAME)
    assert answer.status_code == 200, answer.text
    # checkout's entry spans: the charge (60 ms, failed) and the refund (3 ms).
    assert answer.json() == {
        "services": [
            {"service": "checkout", "requests": 2, "errors": 1, "errorRate": 0.5,
             "p50": 31.5, "p95": pytest.approx(57.15), "p99": pytest.approx(59.43)},
            {"service": "gateway", "requests": 1, "errors": 0, "errorRate": 0.0,
             "p50": 100.0, "p95": 100.0, "p99": 100.0},
        ]
    }  # fmt: skip
    series = get(
        server, tenant.admin_key, "/v1/services", series=1, granularity=60_000, **FRAME
    ).json()["services"]
    assert series[0]["series"] == [
        {"time": FRAME["from"], "requests": 0, "errors": 0},
        {"time": FRAME["from"] + 60_000, "requests": 2, "errors": 1},
    ]
    operations = get(server, tenant.admin_key, "/v1/services/checkout/operations", **FRAME)
    assert operations.status_code == 200, operations.text
    assert operations.json() == {
        "service": "checkout",
        "operations": [
            {"operation": "charge", "requests": 1, "errors": 1, "errorRate": 1.0,
             "p50": 60.0, "p95": 60.0, "p99": 60.0},
            {"operation": "refund", "requests": 1, "errors": 0, "errorRate": 0.0,
             "p50": 3.0, "p95": 3.0, "p99": 3.0},
        ],
    }  # fmt: skip
    errors = get(server, tenant.admin_key, "/v1/services/checkout/errors", **FRAME)
    assert errors.json() == {
        "service": "checkout",
        "errors": [
            {"error": "card declined", "count": 1, "lastSeen": T0_MS + 10,
             "traceId": PAY.hex(), "operations": ["charge"]}
        ],
    }  # fmt: skip


@pytest.mark.parametrize(
    "name", ["team/api", "a/errors", "x/operations", "100% ok?#", "two\nlines"]
)
def test_a_service_name_with_slashes_or_reserved_characters_has_its_reads(
    server: LiveServer, name: str
) -> None:
    tenant = server.new_tenant()
    failing = _error(span("charge", trace_id=PAY, span_id=ROOT, start=T0, end=T0 + 5 * MS,
                          kind=Span.SPAN_KIND_SERVER), "card declined")  # fmt: skip
    send_spans(server, tenant, name, [failing])
    listed = get(server, tenant.admin_key, "/v1/services", **FRAME).json()["services"]
    assert [s["service"] for s in listed] == [name]
    path = f"/v1/services/{quote(name, safe='')}"
    operations = get(server, tenant.admin_key, f"{path}/operations", **FRAME)
    assert operations.status_code == 200, operations.text
    assert operations.json()["service"] == name
    assert [o["operation"] for o in operations.json()["operations"]] == ["charge"]
    errors = get(server, tenant.admin_key, f"{path}/errors", **FRAME)
    assert errors.status_code == 200, errors.text
    assert errors.json()["service"] == name
    assert [e["error"] for e in errors.json()["errors"]] == ["card declined"]


def test_a_search_longer_than_the_engine_parses_is_refused_naming_the_limit(
    server: LiveServer, shop: tuple[Tenant, Tenant]
) -> None:
    """It used to be a 503, the engine's syntax error taken for its failure."""
    tenant, _ = shop
    values = [f"id-{i}" for i in range(20_000)]
    body = {**FRAME, "filters": [{"key": "name", "operation": "IN", "value": values}]}
    r = search(server, tenant.admin_key, body)
    assert r.status_code == 400, r.text
    assert "the engine reads at most 262,144" in r.json()["reason"]


def test_the_reads_over_spans_answer_as_the_queries_api_does(
    server: LiveServer, shop: tuple[Tenant, Tenant]
) -> None:
    tenant, _ = shop
    routes = ["/v1/services", "/v1/services/checkout/operations", "/v1/services/checkout/errors"]
    assert search(server, None, FRAME).status_code == 401
    assert search(server, "ll_sk_" + "0" * 43, FRAME).status_code == 401
    refused = search(server, tenant.ingest_key, FRAME)
    assert refused.status_code == 403
    assert "admin key" in refused.json()["reason"]
    for path in routes:
        assert get(server, None, path).status_code == 401
        assert get(server, tenant.ingest_key, path).status_code == 403

    for body, field in [
        ({"to": FRAME["to"]}, "from"),
        ({**FRAME, "limit": 0}, "limit"),
        ({**FRAME, "limit": 1001}, "limit"),
        ({**FRAME, "status": "failed"}, "status"),
        ({**FRAME, "orderBy": "name"}, "orderBy"),
        ({**FRAME, "services": "checkout"}, "services"),
        ({**FRAME, "minDuration": -1}, "minDuration"),
        ({**FRAME, "minDuration": 10, "maxDuration": 5}, "minDuration"),
        ({**FRAME, "filters": [{"key": "x", "operation": "~"}]}, "filters[0].operation"),
        ({**FRAME, "filters": [{"key": "x", "operation": ">", "value": True}]},
         "filters[0].value"),
        ({**FRAME, "filters": [{"key": "a..b", "operation": "EXISTS"}]}, "filters[0].key"),
        ({**FRAME, "dataset": "no spaces"}, "dataset"),
        ({**FRAME, "from": FRAME["to"] + 1}, "from"),
        ({"from": 0, "to": 40 * 86_400_000}, "to"),
        ({**FRAME, "needle": "x"}, "needle"),
        ([], "body"),
    ]:  # fmt: skip
        bad = search(server, tenant.admin_key, body)
        assert bad.status_code == 400, (body, bad.text)
        assert bad.json()["errors"][0]["field"] == field, (body, bad.json())
    not_json = search(server, tenant.admin_key, b"{from")
    assert not_json.status_code == 400
    assert "not valid JSON" in not_json.json()["reason"]

    for path in routes:
        for params, field in [
            ({"from": "yesterday"}, "from"),
            ({"from": 10, "to": 5}, "from"),
            ({"dataset": "no spaces"}, "dataset"),
        ]:
            bad = get(server, tenant.admin_key, path, **params)
            assert bad.status_code == 400, (path, params, bad.text)
            assert bad.json()["errors"][0]["field"] == field, (path, params)
    assert get(server, tenant.admin_key, "/v1/services", granularity=0).status_code == 400
    assert get(server, tenant.admin_key, routes[1], limit=0).json()["errors"][0]["field"] == (
        "limit"
    )
