"""Splunk's HTTP Event Collector at /services/collector: the ``splunk_handler`` logging
handler from PyPI unmodified but for the address and the token (one event a request,
and its batches of objects written one after another), and Splunk's answers."""

from __future__ import annotations

import base64
import gzip
import logging
import time
import uuid
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from splunk_handler import SplunkHandler

from tests import web
from tests.e2e.shipper_support import stored
from tests.support import LiveServer, Tenant


@pytest.fixture(scope="module")
def tenant(server: LiveServer) -> Tenant:
    return server.new_tenant()


@pytest.fixture()
def logger() -> Iterator[logging.Logger]:
    log = logging.getLogger(f"hec-test-{uuid.uuid4().hex[:8]}")
    log.propagate = False
    log.setLevel(logging.INFO)
    yield log
    for handler in log.handlers:
        handler.close()


def handler(server: LiveServer, token: str, index: str, **options: Any) -> SplunkHandler:
    return SplunkHandler(
        host="127.0.0.1", port=server.port, protocol="http", token=token, index=index,
        source="checkout", sourcetype="_json", verify=False, **options,
    )  # fmt: skip


def collector(server: LiveServer, path: str = "") -> str:
    return f"{server.url}/services/collector{path}"


def post(server: LiveServer, token: str, body: bytes, path: str = "", **kw: Any) -> Any:
    headers = {"Authorization": f"Splunk {token}", **kw.pop("headers", {})}
    return web.post(collector(server, path), content=body, headers=headers, timeout=30, **kw)


def test_splunk_handler_events_are_stored_with_their_time_and_metadata(
    server: LiveServer, tenant: Tenant, logger: logging.Logger
) -> None:
    logger.addHandler(
        handler(server, tenant.ingest_key, "hec-py", flush_interval=0, allow_overrides=True)
    )
    sent_at = time.time() - 30.25
    logger.info("order %s paid", "o-1", extra={"_time": sent_at})
    logger.warning("stock low")
    events = stored(server, tenant, "hec-py")
    assert [e["message"] for e in events] == ["stock low", "order o-1 paid"]
    paid = events[1]
    assert paid["_timestamp"] == round(sent_at * 1000)
    assert (paid["source"], paid["sourcetype"], paid["_dataset"]) == ("checkout", "_json", "hec-py")
    assert paid["host"]


def test_splunk_handler_batches_go_as_objects_one_after_another(
    server: LiveServer, tenant: Tenant, logger: logging.Logger
) -> None:
    batched = handler(server, tenant.ingest_key, "hec-batch", flush_interval=3600)
    logger.addHandler(batched)
    for i in range(25):
        logger.info('{"step": %d, "note": "a } { in a string"}', i)
    batched.force_flush()  # one request: the 25 objects written one after another
    events = stored(server, tenant, "hec-batch")
    assert len(events) == 25
    assert sorted(e["message"] for e in events)[0] == '{"step": 0, "note": "a } { in a string"}'


def test_event_fields_index_and_time_as_splunk_documents_them(
    server: LiveServer, tenant: Tenant
) -> None:
    now = time.time()
    body = (
        orjson.dumps({"event": {"action": "login", "user": "u-1"}, "time": f"{now - 5:.3f}",
                      "host": "web-1", "index": "hec-doc", "fields": {"region": "eu"}})
        + b"\n"
        + orjson.dumps({"event": "plain text", "time": now - 6, "index": "hec-doc",
                        "sourcetype": "syslog"})
    )  # fmt: skip
    answer = post(server, tenant.ingest_key, gzip.compress(body), "/event",
                  headers={"Content-Encoding": "gzip"})  # fmt: skip
    assert (answer.status_code, answer.json()) == (200, {"text": "Success", "code": 0})
    login, plain = stored(server, tenant, "hec-doc")
    assert login == {
        "action": "login", "user": "u-1", "host": "web-1", "region": "eu",
        "_timestamp": round((now - 5) * 1000), "_dataset": "hec-doc", "_service": "default",
        "_namespace": "default", "_id": login["_id"],
    }  # fmt: skip
    assert plain["message"] == "plain text" and plain["sourcetype"] == "syslog"
    assert plain["_timestamp"] == round((now - 6) * 1000)


def test_raw_lines_and_the_dataset_header(server: LiveServer, tenant: Tenant) -> None:
    body = b'first line\n{"status": 500, "path": "/pay"}\n\nthird line\n'
    answer = post(server, tenant.ingest_key, body, "/raw", params={"host": "h1", "sourcetype": "x"},
                  headers={"x-dataset": "hec-raw"})  # fmt: skip
    assert answer.json() == {"text": "Success", "code": 0}
    events = stored(server, tenant, "hec-raw")
    assert sorted(e.get("message", e.get("path")) for e in events) == ["/pay", "first line",
                                                                         "third line"]  # fmt: skip
    assert all(e["host"] == "h1" and e["sourcetype"] == "x" for e in events)
    assert [e["status"] for e in events if "status" in e] == [500]


def test_a_refused_event_is_named_by_its_number_and_the_others_are_stored(
    server: LiveServer, tenant: Tenant
) -> None:
    events = [
        {"event": "kept 0", "index": "hec-partial"},
        {"event": "wrong index", "index": "not a name"},
        {"time": 1, "index": "hec-partial"},
        {"event": "", "index": "hec-partial"},
        {"event": {"deep": _nested(200)}, "index": "hec-partial"},
        {"event": "kept 5", "index": "hec-partial"},
    ]
    answer = post(server, tenant.ingest_key, b"".join(orjson.dumps(e) for e in events))
    assert answer.status_code == 400
    assert answer.json() == {"text": "Incorrect index", "code": 7, "invalid-event-number": 1}
    kept = sorted(e["message"] for e in stored(server, tenant, "hec-partial"))
    assert kept == ["kept 0", "kept 5"]
    for event, code, text in [
        (events[2], 12, "Event field is required"),
        (events[3], 13, "Event field cannot be blank"),
        (events[4], 6, "Invalid data format"),
    ]:
        answer = post(server, tenant.ingest_key, orjson.dumps(event))
        assert answer.json() == {"text": text, "code": code, "invalid-event-number": 0}


def _nested(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    ("body", "answer"),
    [
        (b"", {"text": "No data", "code": 5}),
        (b"  \n", {"text": "No data", "code": 5}),
        (b'{"event": "a"}{"event": ', {"text": "Invalid data format", "code": 6,
                                       "invalid-event-number": 1}),
        (b'{"event": "a"} 42', {"text": "Invalid data format", "code": 6,
                                "invalid-event-number": 1}),
        (b'{"event": ' + b"[" * 3000 + b"]" * 3000 + b"}",
         {"text": "Invalid data format", "code": 6, "invalid-event-number": 0}),
        (b"\xff\xfe", {"text": "Invalid data format", "code": 6, "invalid-event-number": 0}),
    ],
)  # fmt: skip
def test_bodies_splunk_refuses_get_its_code_and_store_nothing(
    server: LiveServer, tenant: Tenant, body: bytes, answer: dict[str, Any]
) -> None:
    got = post(server, tenant.ingest_key, body, params={"index": "hec-bad"})
    assert got.status_code == 400
    assert got.json() == answer
    assert stored(server, tenant, "logs") == []


def test_tokens_as_splunk_answers_them(
    server: LiveServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    body = orjson.dumps({"event": "x", "index": "hec-auth"})
    basic = "Basic " + base64.b64encode(f"x:{tenant.ingest_key}".encode()).decode()
    for header in (f"Splunk {tenant.ingest_key}", basic, f"Bearer {tenant.ingest_key}"):
        answer = web.post(collector(server), content=body, headers={"Authorization": header})
        assert answer.json()["code"] == 0, header
    assert post(server, other_tenant.ingest_key, body).json()["code"] == 0
    assert len(stored(server, tenant, "hec-auth")) == 3
    assert len(stored(server, other_tenant, "hec-auth")) == 1
    cases = [
        ({}, 401, 2, "Token is required"),
        ({"Authorization": "Splunk"}, 401, 3, "Invalid authorization"),
        ({"Authorization": f"Digest {tenant.ingest_key}"}, 401, 3, "Invalid authorization"),
        ({"Authorization": "Splunk ll_pk_unknown"}, 403, 4, "Invalid token"),
        ({"Authorization": "Splunk 3c8a2d0e-0000-4000-8000-000000000000"}, 403, 4, "Invalid token"),
    ]
    for headers, status, code, text in cases:
        answer = web.post(collector(server, "/event"), content=body, headers=headers)
        assert (answer.status_code, answer.json()) == (status, {"text": text, "code": code})
    assert len(stored(server, tenant, "hec-auth")) == 3


def test_health_ack_and_other_paths(server: LiveServer, tenant: Tenant) -> None:
    healthy = {"text": "HEC is healthy", "code": 17}
    for path in ("/health", "/health/1.0"):
        assert web.get(collector(server, path)).json() == healthy
        with_token = web.get(collector(server, path),
                             headers={"Authorization": f"Splunk {tenant.ingest_key}"})  # fmt: skip
        assert with_token.json() == healthy
        bad = web.get(collector(server, path), headers={"Authorization": "Splunk nope"})
        assert bad.status_code == 400 and bad.json()["code"] == 4
    ack = post(server, tenant.ingest_key, b'{"acks": [0]}', "/ack")
    assert (ack.status_code, ack.json()) == (400, {"text": "ACK is disabled", "code": 14})
    assert web.get(collector(server, "/nothing")).status_code == 404
    assert (
        post(server, tenant.ingest_key, orjson.dumps({"event": "1.0"}), "/event/1.0").json()["code"]
        == 0
    )


def test_secret_looking_keys_are_redacted(server: LiveServer, tenant: Tenant) -> None:
    body = orjson.dumps({"event": {"msg": "login", "client_secret": "c"}, "index": "hec-secrets",
                         "fields": {"x-auth-token": "t"}})  # fmt: skip
    assert post(server, tenant.ingest_key, body).json()["code"] == 0
    (event,) = stored(server, tenant, "hec-secrets")
    assert event["client_secret"] == event["x-auth-token"] == "[REDACTED]"
