"""Whatever body a client sends to the Events API, the answer is never a 500.

Each example goes through the whole pipeline (parse, check, enrich, redact, the
INSERT into chDB) and the response is written as the endpoint writes it; a few
go through the real server on one keep-alive connection.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from limelight.errors import ExposedError
from limelight.ingest.service import Origin, ingest_body
from limelight.tenant import Tenant
from tests import query_reference as ref
from tests import web
from tests.properties.strategies import event_bodies
from tests.support import LiveServer
from tests.support import Tenant as LiveTenant
from tests.unit.ingest.limits import limits

TENANT = Tenant("ws_properties", "env_events")
LIMITS = limits(64 * 1024, max_events=200)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return ref.shared_chdb_store(tmp_path_factory)


@given(
    body=event_bodies(),
    redact=st.booleans(),
    service=st.none() | st.text(max_size=8),
    namespace=st.none() | st.text(max_size=8),
)
def test_any_body_is_stored_or_refused_with_a_client_error(
    store: Any, body: bytes, redact: bool, service: str | None, namespace: str | None
) -> None:
    origin = Origin(TENANT, "properties", service, namespace, redact)
    try:
        outcome = ingest_body(store, origin, body, LIMITS)
    except ExposedError as exc:
        assert exc.status in (400, 413), exc
        return
    assert outcome.accepted + outcome.invalid_count >= 1
    orjson.dumps({"message": "Bad Request", "invalid": outcome.invalid})  # what the client gets


@pytest.fixture(scope="module")
def client(server: LiveServer) -> Iterator[httpx.Client]:
    tenant: LiveTenant = server.new_tenant()
    headers = {"x-api-key": tenant.ingest_key}
    with web.Client(base_url=f"{server.url}/events", headers=headers, timeout=60) as c:
        yield c


@settings(max_examples=100)
@given(body=event_bodies())
def test_the_server_answers_any_body_without_a_500_on_one_connection(
    client: httpx.Client, body: bytes
) -> None:
    r = client.post("/v1/properties", content=body)
    assert r.status_code in (202, 400, 413), r.text
    assert "message" in r.json()
