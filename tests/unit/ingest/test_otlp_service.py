"""From a request body to stored rows: system fields, size limit, secrets."""

from __future__ import annotations

import orjson
import pytest
from google.protobuf.json_format import MessageToJson

from limelight.ingest.otlp.codec import Encoding
from limelight.ingest.otlp.service import otlp_rows
from limelight.ingest.otlp.signals import TRACES
from limelight.ingest.service import Origin
from limelight.tenant import Tenant
from tests.unit.ingest.limits import limits
from tests.unit.ingest.otlp_builders import T0, span, traces

ORIGIN = Origin(tenant=Tenant("ws", "env"), dataset="otel")


def test_rows_take_service_namespace_and_time_from_each_resource() -> None:
    request = traces([span("a")], {"service.name": "api", "service.namespace": "shop"})
    other = traces([span("b")], {"service.name": "worker"})
    request.resource_spans.extend(other.resource_spans)
    request.resource_spans.extend(traces([span("c")]).resource_spans)
    rows, rejections = otlp_rows(
        TRACES, ORIGIN, request.SerializeToString(), Encoding.PROTOBUF, limits(256 * 1024)
    )
    assert rejections.count == 0
    names = [(orjson.loads(r.raw)["name"], r.service, r.namespace) for r in rows]
    assert names == [("a", "api", "shop"), ("b", "worker", "worker"), ("c", "default", "default")]
    assert {r.timestamp_ms for r in rows} == {T0 // 1_000_000}
    assert {r.dataset for r in rows} == {"otel"}
    assert len({r.id for r in rows}) == 3


def test_events_over_the_size_limit_are_rejected_the_rest_kept() -> None:
    big = span("big", attributes={"payload": "x" * 5000})
    body = traces([span("small"), big]).SerializeToString()
    rows, rejections = otlp_rows(TRACES, ORIGIN, body, Encoding.PROTOBUF, limits(4096))
    assert [orjson.loads(r.raw)["name"] for r in rows] == ["small"]
    assert rejections.count == 1
    assert "4096 bytes" in rejections.message()


def test_secret_attributes_are_redacted_in_every_event_of_a_resource() -> None:
    resource = {"service.name": "api", "db.password": "hunter2"}
    attrs = {"http.request.header.authorization": "Bearer abc", "user": "ann"}
    body = traces([span("a", attributes=attrs), span("b")], resource).SerializeToString()
    rows, _ = otlp_rows(TRACES, ORIGIN, body, Encoding.PROTOBUF, limits(256 * 1024))
    assert len(rows) == 2
    for row in rows:
        assert b"hunter2" not in row.raw and b"Bearer abc" not in row.raw
        assert orjson.loads(row.raw)["resource"]["db"]["password"] == "[REDACTED]"
    first = orjson.loads(rows[0].raw)
    assert first["attributes"]["http"]["request"]["header"]["authorization"] == "[REDACTED]"
    assert first["attributes"]["user"] == "ann"


@pytest.mark.parametrize("key", ["api.key", "x.api.key", "private.key", "session.id"])
def test_a_dotted_secret_attribute_is_redacted_as_the_events_api_redacts_it(key: str) -> None:
    # Split at its dots, the attribute's last part alone ("key", "id") is no secret.
    body = traces([span("a", attributes={key: "hunter2", "api.version": "2"})]).SerializeToString()
    [row], _ = otlp_rows(TRACES, ORIGIN, body, Encoding.PROTOBUF, limits(256 * 1024))
    assert b"hunter2" not in row.raw
    assert b"[REDACTED]" in row.raw
    assert orjson.loads(row.raw)["attributes"]["api"]["version"] == "2"


@pytest.mark.parametrize("encoding", [Encoding.PROTOBUF, Encoding.JSON])
def test_a_secret_nested_in_a_kvlist_attribute_is_redacted(encoding: Encoding) -> None:
    # {"api": {"key": ...}} as a kvlist: no key of the body holds a hint of its own
    # ("api" and "key"), and in protobuf no quote follows "api".
    request = traces([span("a", attributes={"api": {"key": "hunter2", "version": "2"}})])
    body = (
        request.SerializeToString()
        if encoding is Encoding.PROTOBUF
        else MessageToJson(request).encode()
    )
    [row], _ = otlp_rows(TRACES, ORIGIN, body, encoding, limits(256 * 1024))
    assert orjson.loads(row.raw)["attributes"]["api"] == {"key": "[REDACTED]", "version": "2"}


def test_environments_without_redaction_keep_the_values() -> None:
    body = traces([span("a")], {"db.password": "hunter2"}).SerializeToString()
    origin = Origin(tenant=ORIGIN.tenant, dataset="otel", redact_secrets=False)
    rows, _ = otlp_rows(TRACES, origin, body, Encoding.PROTOBUF, limits(256 * 1024))
    assert b"hunter2" in rows[0].raw


@pytest.mark.parametrize(
    "key",
    [
        "a" + ".a" * 300,  # nests 301 levels: the serialiser stopped at 254 with a 500
        "a." * 5000 + "token",  # a secret 5,001 levels down: redaction recursed too deep
        "a" + ".a" * 130,
    ],
)
def test_a_span_nested_too_deep_by_its_dotted_keys_is_rejected_the_rest_kept(key: str) -> None:
    body = traces([span("ok"), span("deep", attributes={key: "v"})]).SerializeToString()
    rows, rejections = otlp_rows(TRACES, ORIGIN, body, Encoding.PROTOBUF, limits(256 * 1024))
    assert [orjson.loads(r.raw)["name"] for r in rows] == ["ok"]
    assert rejections.message() == "1 spans nesting objects and arrays more than 128 levels deep"


def test_a_span_with_dotted_keys_nesting_128_levels_is_kept() -> None:
    # event, attributes and 126 key parts.
    key = "a" + ".a" * 125
    body = traces([span("deep", attributes={key: "v"})]).SerializeToString()
    rows, rejections = otlp_rows(TRACES, ORIGIN, body, Encoding.PROTOBUF, limits(256 * 1024))
    assert rejections.count == 0 and len(rows) == 1
