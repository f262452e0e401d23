"""Whatever OTLP body a client sends, in protobuf or JSON, the answer is never a 500.

Each example is decoded, mapped, redacted, stored in chDB and answered with
the response message in the request's encoding, as the endpoint does.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from limelight.errors import ExposedError
from limelight.ingest.otlp.codec import Encoding, encode_message, export_response
from limelight.ingest.otlp.service import ingest_otlp
from limelight.ingest.otlp.signals import SIGNALS
from limelight.ingest.service import Origin
from limelight.tenant import Tenant
from tests import query_reference as ref
from tests.properties.strategies import otlp_json_bodies, otlp_protobuf_bodies
from tests.unit.ingest.limits import limits

TENANT = Tenant("ws_properties", "env_otlp")
LIMITS = limits(64 * 1024)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return ref.shared_chdb_store(tmp_path_factory)


def export(store: Any, name: str, body: bytes, encoding: Encoding, redact: bool) -> None:
    signal = SIGNALS[name]
    origin = Origin(TENANT, "otel", redact_secrets=redact)
    try:
        outcome = ingest_otlp(store, signal, origin, body, encoding, LIMITS)
    except ExposedError as exc:
        assert exc.status in (400, 413), exc
        return
    response = export_response(signal, outcome.rejected, outcome.message)
    encode_message(response, encoding)


@given(request=otlp_protobuf_bodies(), redact=st.booleans())
def test_any_protobuf_body_is_stored_or_refused_with_a_client_error(
    store: Any, request: tuple[str, bytes], redact: bool
) -> None:
    export(store, *request, Encoding.PROTOBUF, redact)


@given(request=otlp_json_bodies(), redact=st.booleans())
def test_any_json_body_is_stored_or_refused_with_a_client_error(
    store: Any, request: tuple[str, bytes], redact: bool
) -> None:
    export(store, *request, Encoding.JSON, redact)
