"""Deeply nested JSON gets a 400 wherever a request body is read as JSON.

What each parser reads: orjson 1,024 levels (the Events API, OTLP, the Queries, Alerts
and Datasets APIs), pydantic's JSON parser 200 (query runs), the standard library
up to Python's recursion limit (OAuth, and events holding integers beyond 64 bits); the
OTLP JSON decoder refuses more than ``MAX_JSON_DEPTH`` levels itself, since the protobuf
library's error messages repr what they could not read (1,001 levels were a 500).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx
import pytest
from google.protobuf.internal.encoder import _VarintBytes

from limelight.ingest.otlp.codec import MAX_JSON_DEPTH
from tests import web
from tests.e2e.test_console_pages import Member, member_of
from tests.support import LiveServer, Tenant


def brackets(levels: int) -> str:
    return "[" * levels + "]" * levels


def objects(levels: int) -> str:
    return '{"a": ' * levels + "1" + "}" * levels


# Nested values: just past the OTLP limit, the body of the report, the deepest orjson
# reads, one level more, and far more (within the OAuth endpoints' 16 KiB).
VALUES = {
    "arrays-201": brackets(MAX_JSON_DEPTH + 1),
    "arrays-1001": brackets(1001),
    "objects-1001": objects(1001),
    "arrays-1023": brackets(1023),
    "arrays-1025": brackets(1025),
    "arrays-8000": brackets(8000),
}


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    key: str  # "ingest", "admin" or "" (none)
    body: Callable[[str], str]  # the request's JSON with the nested value placed in it


ROUTES = {
    "events": Route("POST", "/events/v1/deep", "ingest", lambda v: f'[{{"a": {v}}}]'),
    "events-whole": Route("POST", "/events/v1/deep", "ingest", lambda v: v),
    "otlp-traces": Route(
        "POST", "/otel/v1/traces", "ingest", lambda v: f'{{"resourceSpans": {v}}}'
    ),
    "otlp-logs": Route(
        "POST",
        "/otel/v1/logs",
        "ingest",
        lambda v: f'{{"resourceLogs": [{{"scopeLogs": [{{"logRecords": [{{"body": {v}}}]}}]}}]}}',
    ),
    "otlp-metrics": Route(
        "POST", "/otel/v1/metrics", "ingest", lambda v: f'{{"resourceMetrics": [{{"x": {v}}}]}}'
    ),
    "queries": Route(
        "POST",
        "/v1/queries",
        "admin",
        lambda v: (
            f'{{"name": "deep", "filters": [{{"key": "a", "operation": "=", "value": {v}}}]}}'
        ),
    ),
    "queries-update": Route("PUT", "/v1/queries/{query_id}", "admin", lambda v: f'{{"x": {v}}}'),
    "query-runs": Route(
        "POST",
        "/v1/query_run",
        "admin",
        lambda v: f'{{"from": 0, "to": 1000, "query": {{"calculations": {v}}}}}',
    ),
    "alerts": Route(
        "POST", "/v1/alerts", "admin", lambda v: f'{{"name": "deep", "threshold": {v}}}'
    ),
    "alerts-update": Route("PUT", "/v1/alerts/any", "admin", lambda v: f'{{"destinations": {v}}}'),
    "retention": Route(
        "PUT", "/v1/datasets/deep/retention", "admin", lambda v: f'{{"retention": {v}}}'
    ),
    "oauth-token": Route("POST", "/oauth/token", "", lambda v: f'{{"grantType": {v}}}'),
    "oauth-revoke": Route("POST", "/oauth/revoke", "", lambda v: f'{{"token": {v}}}'),
}


@pytest.fixture(scope="module")
def query_id(server: LiveServer) -> Iterator[tuple[Tenant, str]]:
    tenant = server.new_tenant()
    created = web.post(
        f"{server.url}/v1/queries",
        json={"name": "count", "calculations": [{"operator": "COUNT"}]},
        headers={"Authorization": tenant.admin_key},
        timeout=30,
    )
    yield tenant, created.json()["query"]["id"]


@pytest.mark.parametrize("value", VALUES.values(), ids=VALUES.keys())
@pytest.mark.parametrize("route", ROUTES.values(), ids=ROUTES.keys())
def test_deeply_nested_json_is_a_bad_request(
    server: LiveServer, query_id: tuple[Tenant, str], route: Route, value: str
) -> None:
    tenant, saved = query_id
    headers = {"content-type": "application/json"}
    if route.key == "ingest":
        headers["x-api-key"] = tenant.ingest_key
    elif route.key == "admin":
        headers["Authorization"] = tenant.admin_key
    answer = web.request(
        route.method,
        server.url + route.path.format(query_id=saved),
        content=route.body(value).encode(),
        headers=headers,
        timeout=60,
    )
    assert answer.status_code == 400, answer.text[:300]
    body = answer.json()
    assert body.get("message") or body.get("error") == "invalid_request", body
    if route.path.startswith("/otel/"):
        assert body["code"] == 3  # INVALID_ARGUMENT


def _field(number: int, payload: bytes) -> bytes:
    return bytes([number << 3 | 2]) + _VarintBytes(len(payload)) + payload


def test_a_deeply_nested_otlp_protobuf_message_is_a_bad_request(
    server: LiveServer, query_id: tuple[Tenant, str]
) -> None:
    tenant, _ = query_id
    value = b""
    for _ in range(1000):  # AnyValue.array_value (5) holding ArrayValue.values (1)
        value = _field(5, _field(1, value))
    attribute = _field(1, b"deep") + _field(2, value)  # KeyValue: key, value
    # ExportTraceServiceRequest.resource_spans > ResourceSpans.resource > attributes
    body = _field(1, _field(1, _field(1, attribute)))
    answer = web.post(
        f"{server.url}/otel/v1/traces",
        content=body,
        headers={"content-type": "application/x-protobuf", "x-api-key": tenant.ingest_key},
        timeout=60,
    )
    assert answer.status_code == 400


@pytest.fixture(scope="module")
def member(server: LiveServer) -> Iterator[Member]:
    found = member_of(server, server.new_tenant())
    yield found
    found.browser.close()


@pytest.mark.parametrize("value", [brackets(1001), objects(1023)], ids=["arrays", "objects"])
def test_the_builders_filter_value_nested_deeply_is_a_bad_request(
    member: Member, value: str
) -> None:
    answer: httpx.Response = member.browser.client.post(
        f"{member.base}/query/run",
        data={"co": "COUNT", "fk": "a", "fo": "=", "fv": value},
        headers={"x-csrf-token": member.csrf, "accept": "application/json"},
    )
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["field"] == "filters[0].value"
