"""Loki's push API at /loki/api/v1/push: python-logging-loki unmodified but for the URL
and the key (its JSON, and the legacy form it sends by default), snappy-compressed
protobuf as Promtail and Alloy send it (written here byte by byte from Loki's
push.proto, so the server's own descriptor is not what checks it), and bad bodies."""

from __future__ import annotations

import base64
import gzip
import logging
import time
import uuid
import warnings
from collections.abc import Iterator
from typing import Any

import cramjam
import logging_loki
import orjson
import pytest

from tests import web
from tests.e2e.shipper_support import stored
from tests.support import LiveServer, Tenant

NS = 1_000_000_000


@pytest.fixture(scope="module")
def tenant(server: LiveServer) -> Tenant:
    return server.new_tenant()


def push_url(server: LiveServer) -> str:
    return f"{server.url}/loki/api/v1/push"


@pytest.fixture()
def logger() -> Iterator[logging.Logger]:
    log = logging.getLogger(f"loki-test-{uuid.uuid4().hex[:8]}")
    log.propagate = False
    log.setLevel(logging.INFO)
    yield log
    for handler in log.handlers:
        handler.close()


def test_python_logging_loki_lines_become_events_with_their_labels(
    server: LiveServer, tenant: Tenant, logger: logging.Logger
) -> None:
    handler = logging_loki.LokiHandler(
        url=push_url(server),
        tags={"service_name": "billing", "dataset": "loki-py"},
        auth=("limelight", tenant.ingest_key),
        version="1",
    )
    logger.addHandler(handler)
    before = time.time()
    for i in range(5):
        logger.info("invoice %d paid", i, extra={"tags": {"region": "eu"}})
    logger.error('{"event": "refund", "amount": 12.5, "order": {"id": "o-1"}}')
    after = time.time()
    events = stored(server, tenant, "loki-py")
    assert len(events) == 6
    newest = events[0]
    # A line that is JSON keeps its fields, queryable as any event's.
    assert newest["event"] == "refund" and newest["order"] == {"id": "o-1"}
    assert newest["severity"] == "error" and "message" not in newest
    texts = [e for e in events if "message" in e]
    assert sorted(e["message"] for e in texts) == [f"invoice {i} paid" for i in range(5)]
    for event in events:
        assert event["_dataset"] == "loki-py"
        assert event["_service"] == "billing"
        assert before * 1000 - 1 <= event["_timestamp"] <= after * 1000 + 1
    assert texts[0]["region"] == "eu" and texts[0]["logger"] == logger.name
    # A query on a label finds its lines.
    filtered = [e for e in events if e.get("region") == "eu"]
    assert len(filtered) == 5


def test_python_logging_loki_default_legacy_form_is_taken(
    server: LiveServer, tenant: Tenant, logger: logging.Logger
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # it asks for version="1"
        handler = logging_loki.LokiHandler(
            url=push_url(server), tags={"job": "cron"}, auth=("limelight", tenant.ingest_key)
        )
    logger.addHandler(handler)
    sent = time.time()
    logger.warning("nightly run took %ds", 42)
    (event,) = stored(server, tenant, "logs")
    assert event["message"] == "nightly run took 42s" and event["job"] == "cron"
    assert event["_service"] == "cron"
    assert abs(event["_timestamp"] - sent * 1000) < 1000


# ---------------------------------------------------------------- protobuf, by hand


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:  # length-delimited (wire type 2)
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _int_field(number: int, value: int) -> bytes:  # varint (wire type 0)
    return _varint(number << 3) + _varint(value)


def push_request(streams: list[tuple[str, list[tuple[int, str, dict[str, str]]]]]) -> bytes:
    """logproto.PushRequest: streams (1) of labels (1) and entries (2), each entry a
    Timestamp (1: seconds 1, nanos 2), a line (2) and structured metadata (3)."""
    body = b""
    for labels, entries in streams:
        stream = _field(1, labels.encode())
        for time_ns, line, metadata in entries:
            ts = _int_field(1, time_ns // NS) + _int_field(2, time_ns % NS)
            entry = _field(1, ts) + _field(2, line.encode())
            for name, value in metadata.items():
                entry += _field(3, _field(1, name.encode()) + _field(2, value.encode()))
            stream += _field(2, entry)
        body += _field(1, stream)
    return body


def snappy(data: bytes) -> bytes:
    return bytes(cramjam.snappy.compress_raw(data))


def post(server: LiveServer, key: str, body: bytes, **headers: str) -> Any:
    headers = {"Authorization": f"Bearer {key}", **headers}
    return web.post(push_url(server), content=body, headers=headers, timeout=30)


def test_snappy_protobuf_as_promtail_sends_it(server: LiveServer, tenant: Tenant) -> None:
    now_ns = time.time_ns()
    body = push_request([
        ('{app="api", dataset="loki-pb", service="checkout"}', [
            (now_ns - 2 * NS + 123_456_789, "GET /cart 200", {"trace_id": "abc"}),
            (now_ns - NS, 'he said "hi"\nand left', {}),
        ]),
        ('{job="worker", level="warn", dataset="loki-pb"}', [(now_ns, "queue full", {})]),
    ])  # fmt: skip
    answer = post(
        server, tenant.ingest_key, snappy(body), **{"Content-Type": "application/x-protobuf"}
    )
    assert answer.status_code == 204, answer.text
    events = stored(server, tenant, "loki-pb")
    assert [e["message"] for e in events] == [
        "queue full",
        'he said "hi"\nand left',
        "GET /cart 200",
    ]
    oldest = events[-1]
    assert oldest["trace_id"] == "abc" and oldest["app"] == "api"
    assert oldest["_timestamp"] == (now_ns - 2 * NS + 123_456_789) // 1_000_000
    assert oldest["_service"] == "checkout"
    assert events[0]["_service"] == "worker" and events[0]["level"] == "warn"


def test_json_with_structured_metadata_gzip_and_the_dataset_header(
    server: LiveServer, tenant: Tenant
) -> None:
    now_ns = time.time_ns()
    body = {"streams": [{"stream": {"service_name": "web", "dataset": "ignored"},
                         "values": [[str(now_ns), "line one", {"user": "u-1"}],
                                    [str(now_ns + 1000), "line two"]]}]}  # fmt: skip
    answer = post(
        server, tenant.ingest_key, gzip.compress(orjson.dumps(body)),
        **{"Content-Type": "application/json", "Content-Encoding": "gzip", "x-dataset": "loki-hdr"},
    )  # fmt: skip
    assert answer.status_code == 204, answer.text
    events = stored(server, tenant, "loki-hdr")
    assert [(e["message"], e.get("user")) for e in events] == [
        ("line two", None),
        ("line one", "u-1"),
    ]
    assert stored(server, tenant, "ignored") == []


def test_basic_auth_carries_the_key_and_nothing_else_passes(
    server: LiveServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    body = orjson.dumps({"streams": [{"stream": {"dataset": "loki-auth"},
                                      "values": [[str(time.time_ns()), "x"]]}]})  # fmt: skip
    basic = "Basic " + base64.b64encode(f"123456:{tenant.ingest_key}".encode()).decode()
    json_type = {"Content-Type": "application/json"}
    assert post(server, "", body, Authorization=basic, **json_type).status_code == 204
    assert post(server, other_tenant.ingest_key, body, **json_type).status_code == 204
    assert len(stored(server, tenant, "loki-auth")) == 1
    assert len(stored(server, other_tenant, "loki-auth")) == 1
    for header in ("", "Bearer ll_pk_unknown", "Splunk " + tenant.ingest_key, "ApiKey x"):
        answer = web.post(
            push_url(server), content=body, headers={"Authorization": header, **json_type}
        )
        assert answer.status_code == 401, header
    assert len(stored(server, tenant, "loki-auth")) == 1


@pytest.mark.parametrize(
    ("body", "content_type", "status", "text"),
    [
        (b"{", "application/json", 400, "not valid JSON"),
        (b"[]", "application/json", 400, '{"streams"'),
        (b'{"streams": [{"stream": {"a": 1}, "values": []}]}', "application/json", 400,
         "object of strings"),
        (b'{"streams": [{"stream": {}, "values": [["x", "l"]]}]}', "application/json", 400,
         "nanoseconds"),
        (b'{"streams": [' + b"[" * 3000 + b"]" * 3000 + b"]}", "application/json", 400, "JSON"),
        (b'{"streams": [{"stream": ' + b'{"a":' * 200 + b"1" + b"}" * 200 + b', "values": []}]}',
         "application/json", 400, "object of strings"),
        (b"not snappy", "application/x-protobuf", 400, "snappy"),
        (snappy(b"\xff\xff\xff"), "application/x-protobuf", 400, "PushRequest"),
        (snappy(push_request([("app=x", [(1, "l", {})])])), "application/x-protobuf", 400,
         "selector"),
    ],
)  # fmt: skip
def test_bodies_loki_would_refuse_get_its_400_and_store_nothing(
    server: LiveServer, tenant: Tenant, body: bytes, content_type: str, status: int, text: str
) -> None:
    answer = post(server, tenant.ingest_key, body, **{"Content-Type": content_type})
    assert answer.status_code == status
    assert text in answer.text


def test_refused_entries_are_named_and_the_others_stored(
    server: LiveServer, tenant: Tenant
) -> None:
    now = str(time.time_ns())
    body = {"streams": [
        {"stream": {"dataset": "loki-partial"}, "values": [[now, "kept"], [now, "x" * 300_000]]},
        {"stream": {"dataset": "not a name!"}, "values": [[now, "refused"]]},
    ]}  # fmt: skip
    answer = post(
        server, tenant.ingest_key, orjson.dumps(body), **{"Content-Type": "application/json"}
    )
    assert answer.status_code == 400
    assert answer.text.startswith("2 of 3 entries refused; entry 1: the event is")
    assert [e["message"] for e in stored(server, tenant, "loki-partial")] == ["kept"]


def test_a_snappy_bomb_is_refused_before_it_is_inflated(server: LiveServer, tenant: Tenant) -> None:
    bomb = snappy(b"\x00" * (7 * 1024 * 1024))
    assert len(bomb) < 400_000
    answer = post(server, tenant.ingest_key, bomb, **{"Content-Type": "application/x-protobuf"})
    assert answer.status_code == 413


def test_secret_looking_labels_and_fields_are_redacted(server: LiveServer, tenant: Tenant) -> None:
    """In protobuf too, whose body is compressed: the test is on the inflated bytes."""
    now_ns = time.time_ns()
    line = '{"msg": "login", "password": "hunter2"}'
    labels = '{dataset="loki-secrets", api_key="k-123"}'
    body = push_request([(labels, [(now_ns, line, {"session_id": "s"})])])
    answer = post(
        server, tenant.ingest_key, snappy(body), **{"Content-Type": "application/x-protobuf"}
    )
    assert answer.status_code == 204
    (event,) = stored(server, tenant, "loki-secrets")
    assert event["api_key"] == event["password"] == event["session_id"] == "[REDACTED]"
    assert event["msg"] == "login"
