"""Whatever body a shipper sends (Elasticsearch bulk, Loki push, Splunk HEC), the answer
is its format's own, never a 500.

Each example goes through the whole pipeline (decode, check, enrich, redact, the INSERT
into chDB) and its answer is written as the endpoint writes it; a few go through the
real server on one keep-alive connection.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import cramjam
import httpx
import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from limelight.api.es_answers import filter_path
from limelight.errors import ExposedError
from limelight.ingest.es_bulk import ingest_bulk, response_items
from limelight.ingest.hec import HecError, ingest_events, ingest_raw
from limelight.ingest.loki import ingest_push
from limelight.tenant import Tenant
from tests import query_reference as ref
from tests import web
from tests.properties.shipper_strategies import (
    bulk_bodies,
    filter_paths,
    hec_bodies,
    index_names,
    loki_json_bodies,
    loki_protobuf_messages,
    spoilt,
)
from tests.support import LiveServer
from tests.unit.ingest.limits import limits

TENANT = Tenant("ws_properties", "env_shippers")
LIMITS = limits(64 * 1024, max_events=200)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return ref.shared_chdb_store(tmp_path_factory)


@given(body=bulk_bodies(), index=st.none() | index_names, spec=filter_paths, redact=st.booleans())
def test_any_bulk_body_is_stored_or_refused_with_a_client_error(
    store: Any, body: bytes, index: str | None, spec: str | None, redact: bool
) -> None:
    try:
        items, outcome = ingest_bulk(store, TENANT, redact, body, index, LIMITS)
    except ExposedError as exc:
        assert exc.status in (400, 413), exc
        return
    answer = {"took": 1, "errors": bool(outcome.refused), "items": response_items(items, outcome)}
    assert len(answer["items"]) == len(items) >= 1
    orjson.dumps(filter_path(answer, spec) if spec else answer)


@st.composite
def loki_bodies(draw: st.DrawFn) -> tuple[bytes, bool]:
    """(body, is protobuf): JSON, or protobuf compressed (sometimes badly) with snappy."""
    if draw(st.booleans()):
        return draw(loki_json_bodies()), False
    message = draw(loki_protobuf_messages())
    return draw(spoilt(bytes(cramjam.snappy.compress_raw(message)))), True


@given(body=loki_bodies(), dataset=st.none() | st.sampled_from(["logs", "x.y"]))
# Each answered 500 (Python refuses to convert more than 4,300 digits): a time of 5,000
# digits, and a line with a run of 5,000 digits after a comma.
@example(
    body=(b'{"streams":[{"stream":{},"values":[["' + b"9" * 5000 + b'","x"]]}]}', False),
    dataset=None,
)
@example(
    body=(b'{"streams":[{"stream":{},"values":[["1","x,' + b"1" * 5000 + b'"]]}]}', False),
    dataset=None,
)
def test_any_loki_push_is_stored_or_refused_with_a_client_error(
    store: Any, body: tuple[bytes, bool], dataset: str | None
) -> None:
    data, protobuf = body
    try:
        result = ingest_push(store, TENANT, True, data, protobuf, dataset, LIMITS, 1 << 20)
    except ExposedError as exc:
        assert exc.status in (400, 413), exc
        return
    assert (result.message == "") == (not result.outcome.refused)


@given(body=hec_bodies())
# Each answered 500: an index nested a thousand levels (the message's repr of it passed
# the recursion limit), and a run of 5,000 digits after a comma in a string (Python
# refuses to convert more than 4,300 digits).
@example(body=b'{"event":"x","index":' + b"[" * 1000 + b"]" * 1000 + b"}")
@example(body=b'{"event":"x,' + b"1" * 5000 + b'"}')
def test_any_hec_event_body_is_stored_or_refused_with_splunks_answer(
    store: Any, body: bytes
) -> None:
    try:
        result = ingest_events(store, TENANT, True, body, "logs", LIMITS)
    except HecError as exc:
        assert exc.http_status == 400 and exc.extra["code"] in (5, 6), exc
        return
    except ExposedError as exc:
        assert exc.status in (400, 413), exc
        return
    if result.refused is not None:
        assert result.refused.extra["code"] in (6, 7, 12, 13)
        assert isinstance(result.refused.extra["invalid-event-number"], int)
    else:
        assert result.outcome.accepted == len(result.outcome.results) >= 1


@given(body=st.binary(max_size=200) | loki_json_bodies())
def test_any_hec_raw_body_is_stored_or_refused_with_splunks_answer(store: Any, body: bytes) -> None:
    try:
        ingest_raw(store, TENANT, True, body, "logs", {"host": "h"}, LIMITS)
    except HecError as exc:
        assert exc.extra["code"] in (5, 6), exc
    except ExposedError as exc:
        assert exc.status in (400, 413), exc


@pytest.fixture(scope="module")
def client(server: LiveServer) -> Iterator[httpx.Client]:
    tenant = server.new_tenant()
    with web.Client(base_url=server.url, timeout=60) as c:
        c.headers["Authorization"] = f"Bearer {tenant.ingest_key}"
        yield c


@settings(max_examples=60)
@given(body=bulk_bodies(), spec=filter_paths)
def test_the_server_answers_any_bulk_body_without_a_500(
    client: httpx.Client, body: bytes, spec: str | None
) -> None:
    params = {"filter_path": spec} if spec is not None else {}
    r = client.post("/es/properties/_bulk", content=body, params=params)
    assert r.status_code in (200, 400, 413), r.text
    assert r.headers["x-elastic-product"] == "Elasticsearch"
    r.json()


@settings(max_examples=60)
@given(body=loki_bodies())
def test_the_server_answers_any_loki_push_without_a_500(
    client: httpx.Client, body: tuple[bytes, bool]
) -> None:
    data, protobuf = body
    content_type = "application/x-protobuf" if protobuf else "application/json"
    r = client.post("/loki/api/v1/push", content=data, headers={"Content-Type": content_type})
    assert r.status_code in (204, 400, 413), r.text


@settings(max_examples=60)
@given(body=hec_bodies(), raw=st.booleans())
def test_the_server_answers_any_hec_body_without_a_500(
    client: httpx.Client, body: bytes, raw: bool
) -> None:
    r = client.post("/services/collector/raw" if raw else "/services/collector", content=body)
    assert r.status_code in (200, 400, 413), r.text
    assert isinstance(r.json()["code"], int)
