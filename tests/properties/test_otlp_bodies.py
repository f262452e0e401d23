"""Whatever OTLP body a client sends, in protobuf or JSON, the answer is never a 500.

Each example is decoded, mapped, redacted, stored in chDB and answered with
the response message in the request's encoding, as the endpoint does.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from limelight.errors import BadRequest, ExposedError
from limelight.ingest.otlp.codec import (
    MAX_JSON_DEPTH,
    TOO_DEEP,
    Encoding,
    decode_request,
    encode_message,
    export_response,
)
from limelight.ingest.otlp.service import ingest_otlp
from limelight.ingest.otlp.signals import SIGNALS
from limelight.ingest.service import Origin
from limelight.tenant import Tenant
from tests import query_reference as ref
from tests.properties.strategies import otlp_json_bodies, otlp_json_nested, otlp_protobuf_bodies
from tests.unit.ingest.limits import limits

TENANT = Tenant("ws_properties", "env_otlp")
ORJSON_DEPTH = 1024  # the deepest JSON orjson reads
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


@given(request=otlp_json_nested(ORJSON_DEPTH, MAX_JSON_DEPTH))
# Answered 500: json_format's error message held the value, whose repr passed Python's
# recursion limit.
@example(request=("traces", b'{"resourceSpans":' + b"[" * 1001 + b"]" * 1001 + b"}", 1002))
# A bytes value nested deep: refused as not base64 before its depth was seen, and at a
# thousand levels answered 500 (the message's repr of the value passed the recursion
# limit).
@example(request=("traces", b'{"bytesValue":' + b"[" * 200 + b'"x"' + b"]" * 200 + b"}", 201))
@example(request=("traces", b'{"bytesValue":' + b"[" * 1000 + b"]" * 1000 + b"}", 1001))
def test_a_json_body_is_refused_for_its_depth_exactly_when_it_nests_past_the_limit(
    request: tuple[str, bytes, int],
) -> None:
    name, body, depth = request
    try:
        decode_request(SIGNALS[name], body, Encoding.JSON)
    except BadRequest as exc:
        if depth > ORJSON_DEPTH:
            assert exc.reason == "the body is not valid JSON"
        else:
            assert (exc.reason == TOO_DEEP) == (depth > MAX_JSON_DEPTH), (depth, exc.reason)
        return
    assert depth <= MAX_JSON_DEPTH
