"""The Events API against the real server process: every status, body and odd input."""

from __future__ import annotations

import gzip
import json
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import web
from tests.support import LiveServer, Tenant, launch

MIB = 1024 * 1024
LIMIT = 6 * MIB
SYSTEM = ("_timestamp", "_dataset", "_service", "_namespace", "_id")


@pytest.fixture(scope="module")
def tenant(server: LiveServer) -> Tenant:
    """One tenant for this module: tests keep apart by dataset (each CLI call costs ~1s)."""
    return server.new_tenant()


@pytest.fixture()
def ds() -> str:
    """A dataset name of this test's own."""
    return f"t{uuid.uuid4().hex[:12]}"


def post(
    server: LiveServer,
    path: str,
    content: bytes | Iterator[bytes] | None = None,
    key: str | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    all_headers = {**({"x-api-key": key} if key else {}), **(headers or {})}
    return web.post(f"{server.url}{path}", content=content, headers=all_headers, timeout=60)


def as_sent(event: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in event.items() if k not in SYSTEM}


def exact_body(size: int) -> bytes:
    """A valid JSON array of events of exactly ``size`` bytes (events of ~200kb)."""
    pad = 200_000
    count = size // (pad + 12) + 1
    parts = [b'{"pad":"' + b"x" * pad + b'"}' for _ in range(count)]
    body = b"[" + b",".join(parts) + b"]"
    excess = len(body) - size
    parts[-1] = b'{"pad":"' + b"x" * (pad - excess) + b'"}'
    body = b"[" + b",".join(parts) + b"]"
    assert len(body) == size
    return body


# --- 202 -------------------------------------------------------------------------


def test_accepted_batch_is_stored_with_system_fields(
    server: LiveServer, tenant: Tenant, ds: str
) -> None:
    events = [
        {"message": "one", "timestamp": "2025-11-21T01:53:20.123Z", "service": "web"},
        {"message": "two", "namespace": "checkout"},
    ]
    r = server.send(tenant.ingest_key, ds, events)
    assert r.status_code == 202
    assert r.json() == {"message": "Request Accepted"}
    assert r.headers["access-control-allow-origin"] == "*"

    stored = {e["message"]: e for e in server.read(tenant.admin_key, ds)}
    assert {m: as_sent(e) for m, e in stored.items()} == {e["message"]: e for e in events}
    assert stored["one"]["_timestamp"] == 1_763_690_000_123
    assert stored["one"]["_service"] == "web"
    assert stored["one"]["_namespace"] == "default"
    assert stored["two"]["_service"] == "default"
    assert stored["two"]["_namespace"] == "checkout"
    assert {e["_dataset"] for e in stored.values()} == {ds}
    assert len({e["_id"] for e in stored.values()}) == 2


def test_an_admin_key_may_send_events_too(server: LiveServer, tenant: Tenant, ds: str) -> None:
    assert server.send(tenant.admin_key, ds, [{"by": "admin"}]).status_code == 202
    assert [as_sent(e) for e in server.read(tenant.admin_key, ds)] == [{"by": "admin"}]


# --- partial 400 -------------------------------------------------------------------


def test_partly_invalid_batch_stores_the_valid_events_and_lists_the_others(
    server: LiveServer, tenant: Tenant, ds: str
) -> None:
    too_big = {"blob": "x" * (256 * 1024)}
    batch: list[Any] = [{"n": 0}, "a string", {"n": 2}, too_big, 42, None, [1], {"n": 7}]
    r = server.send(tenant.ingest_key, ds, batch)
    assert r.status_code == 400
    body = r.json()
    assert set(body) == {"message", "invalid"}
    assert body["message"] == "Bad Request"
    invalid = body["invalid"]
    assert [e["index"] for e in invalid] == [1, 3, 4, 5, 6]
    assert [e["event"] for e in invalid] == ["a string", too_big, 42, None, [1]]
    assert all(set(e) == {"index", "reason", "event"} for e in invalid)
    assert "object" in invalid[0]["reason"]
    assert "bytes" in invalid[1]["reason"]
    assert r.headers["access-control-allow-origin"] == "*"

    stored = sorted(e["n"] for e in server.read(tenant.admin_key, ds))
    assert stored == [0, 2, 7]


def test_events_nested_too_deep_are_listed_and_odd_timestamps_are_stored(
    server: LiveServer, tenant: Tenant, ds: str
) -> None:
    """Each of these made the whole batch a 500 (valid events lost) or not JSON."""

    def deep(levels: int) -> bytes:
        return b'{"k":' + b"[" * (levels - 1) + b"]" * (levels - 1) + b"}"

    odd_times = [{"n": i, "timestamp": t} for i, t in enumerate(["\u00b2", "\u00b3", "\u2460"])]
    body = b",".join([json.dumps(e).encode() for e in odd_times] + [deep(300), deep(5000)])
    r = post(server, f"/events/v1/{ds}", b"[" + body + b',{"n": 5}]', tenant.ingest_key)
    assert r.status_code == 400, r.text
    reason = "the event nests objects and arrays more than 128 levels deep"
    assert r.json()["invalid"] == [{"index": 3, "reason": reason}, {"index": 4, "reason": reason}]
    assert sorted(e["n"] for e in server.read(tenant.admin_key, ds)) == [0, 1, 2, 5]
    # The connection was not closed by a 500: the same client goes on.
    with web.Client(base_url=server.url, headers={"x-api-key": tenant.ingest_key}) as client:
        for _ in range(2):
            r = client.post(f"/events/v1/{ds}", content=b"[" + deep(300) + b"]")
            assert r.status_code == 400


def test_a_batch_with_no_valid_event_is_a_400_listing_all(
    server: LiveServer, tenant: Tenant, ds: str
) -> None:
    r = server.send(tenant.ingest_key, ds, [1, "two"])
    assert r.status_code == 400
    assert [e["index"] for e in r.json()["invalid"]] == [0, 1]
    assert server.read(tenant.admin_key, ds) == []


def test_a_batch_on_more_days_than_a_request_may_hold_is_refused_whole(
    server: LiveServer, tenant: Tenant, ds: str
) -> None:
    day = 86_400_000
    start = int(time.time() * 1000) - 400 * day
    r = server.send(tenant.ingest_key, ds, [{"_timestamp": start + i * day} for i in range(101)])
    assert r.status_code == 400
    assert "at most 100 days (UTC); this one's fall on 101" in r.json()["reason"]
    days = server.send(tenant.ingest_key, ds, [{"_timestamp": start + i * day} for i in range(100)])
    assert days.status_code == 202
    # Only the second batch's events are stored: 30 on the first 30 days both sent to.
    run = web.post(
        f"{server.url}/v1/query_run?wait=30",
        json={
            "query": {
                "calculations": [{"operator": "COUNT"}],
                "namespaces": [{"type": "dataset", "value": ds}],
            },
            "from": start,
            "to": start + 30 * day,
        },  # fmt: skip
        headers={"Authorization": tenant.admin_key},
        # The run first waits for the 100 days' parts (seconds on a loaded machine), then
        # answers within its own wait: longer than httpx's 5 s.
        timeout=60,
    )
    assert run.status_code == 200, run.text
    assert run.json()["data"]["aggregates"][0]["values"]["COUNT"] == 30, run.text


def test_an_environment_writes_at_most_a_hundred_past_days_a_minute(tmp_path: Path) -> None:
    """One key sending many requests of 100 past days each made a part per day, 4,000 in
    a second, and held every tenant's inserts: past 100 past days a minute an
    environment's requests are refused whole with 429 on every ingest API, while its live
    events and other environments go on."""
    server = launch(tmp_path / "server", {"LIMELIGHT_PAST_DAYS_PER_MINUTE": "100"})  # the default
    try:
        _past_days_budget(server)
    finally:
        server.stop()


def _past_days_budget(server: LiveServer) -> None:
    # The budget is counted in the wall clock's minutes, and a minute's count fades over
    # the next (a sliding window): a request just past a minute's turn finds most of the
    # budget back. So the requests that must find it spent start with a third of their
    # minute left at least; on a loaded machine they took up to 5 s.
    left = 60 - time.time() % 60
    if left < 20:
        time.sleep(left + 0.05)
    day = 86_400_000
    now = int(time.time() * 1000)
    flood, other = server.new_tenant(), server.new_tenant()
    old = [{"_timestamp": now - (500 + i) * day, "n": i} for i in range(100)]
    assert server.send(flood.ingest_key, "backfill", old).status_code == 202
    past = {"_timestamp": now - 1000 * day, "n": "past"}
    refused = server.send(flood.ingest_key, "backfill", [past])
    assert refused.status_code == 429, refused.text
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert "at most 100 past days a minute" in refused.json()["reason"]
    bulk = post(
        server,
        "/es/logs/_bulk",
        b'{"index":{}}\n' + json.dumps({"@timestamp": now - 900 * day}).encode() + b"\n",
        flood.ingest_key,
    )
    assert bulk.status_code == 429, bulk.text
    assert bulk.json()["error"]["type"] == "es_rejected_execution_exception"
    hec = web.post(
        f"{server.url}/services/collector/event",
        content=json.dumps({"time": (now - 800 * day) / 1000, "event": "x"}),
        headers={"Authorization": f"Splunk {flood.ingest_key}"},
    )
    assert (hec.status_code, hec.json()["code"]) == (429, 9), hec.text
    # The environment's live events, and another environment's past ones, go on.
    assert server.send(flood.ingest_key, "live", [{"n": "live"}]).status_code == 202
    assert server.send(other.ingest_key, "backfill", old).status_code == 202
    stored = server.read(flood.admin_key, "backfill")
    assert sorted(e["n"] for e in stored) == list(range(100))  # nothing refused stored
    assert server.read(flood.admin_key, "logs") == []


def test_an_event_just_under_256kb_is_accepted(server: LiveServer, tenant: Tenant, ds: str) -> None:
    event = {"p": "x" * (256 * 1024 - 9)}  # 256kb - 1 byte as JSON
    assert server.send(tenant.ingest_key, ds, [event]).status_code == 202


# --- 400 for the whole request ------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/events/",
        "/events/v1",
        "/events/v1/",
        "/events/v2/logs",
        "/events/logs",
        "/events/v1/logs/extra",
        "/events/v1/bad%20name",
        "/events/v1/caf%C3%A9",
        "/events/v1/" + "d" * 129,
    ],
)
def test_bad_paths_are_400_with_a_reason(server: LiveServer, tenant: Tenant, path: str) -> None:
    r = post(server, path, b'[{"a": 1}]', tenant.ingest_key)
    assert r.status_code == 400
    body = r.json()
    assert body["message"] == "Bad Request"
    assert body["reason"]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", "empty"),
        (b"   ", "empty"),
        (b"not json", "JSON"),
        (b'[{"a": 1}', "JSON"),
        (b'{"a": 1}', "array"),
        (b"[]", "empty"),
    ],
)
def test_unusable_bodies_are_400_with_a_reason(
    server: LiveServer, tenant: Tenant, ds: str, content: bytes, words: str
) -> None:
    r = post(server, f"/events/v1/{ds}", content, tenant.ingest_key)
    assert r.status_code == 400
    body = r.json()
    assert body["message"] == "Bad Request"
    assert words in body["reason"]
    assert "invalid" not in body


def test_truncated_gzip_is_400(server: LiveServer, tenant: Tenant, ds: str) -> None:
    data = gzip.compress(json.dumps([{"m": "x" * 100}] * 50).encode())
    r = post(
        server, f"/events/v1/{ds}", data[:-20], tenant.ingest_key, {"content-encoding": "gzip"}
    )
    assert r.status_code == 400
    assert "gzip" in r.json()["reason"]


# --- 401 -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"x-api-key": ""},
        {"x-api-key": "nonsense"},
        {"x-api-key": "ll_pk_" + "A" * 43},
        {"x-api-key": "ll_pk_" + "A" * 500},
        {"x-api-key": "ll_at_" + "A" * 43},
    ],
)
def test_missing_or_unknown_keys_are_401(server: LiveServer, headers: dict[str, str]) -> None:
    r = post(server, "/events/v1/logs", b'[{"a": 1}]', headers=headers)
    assert r.status_code == 401
    assert r.json()["message"] == "Unauthorised"
    assert r.headers["access-control-allow-origin"] == "*"


# --- 405 and the order of checks ------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE"])
def test_other_methods_are_405_even_without_a_key(server: LiveServer, method: str) -> None:
    r = web.request(method, f"{server.events_url}/v1/logs", timeout=30)
    assert r.status_code == 405
    assert r.json() == {"message": "Method Not Allowed"}


def test_checks_run_in_order_method_key_path_size_body(server: LiveServer, tenant: Tenant) -> None:
    huge = b"x" * (LIMIT + 1)
    # Method first: a bad key, path and body do not matter.
    r = web.put(f"{server.events_url}/v2", content=huge, headers={"x-api-key": "bad"})
    assert r.status_code == 405
    # Then the key, before the path and the size.
    assert post(server, "/events/v2", huge, "ll_pk_wrong").status_code == 401
    # Then the path, before the size.
    assert post(server, "/events/v2/logs", huge, tenant.ingest_key).status_code == 400
    # Then the size, before the body.
    r = post(server, "/events/v1/logs", huge, tenant.ingest_key)
    assert r.status_code == 413
    # Only then the body.
    assert post(server, "/events/v1/logs", b"x", tenant.ingest_key).status_code == 400


# --- 413 -------------------------------------------------------------------------------


def test_exactly_6mb_is_accepted_and_one_byte_more_is_413(
    server: LiveServer, tenant: Tenant
) -> None:
    body = exact_body(LIMIT)
    assert post(server, "/events/v1/big", body, tenant.ingest_key).status_code == 202
    r = post(server, "/events/v1/big", body + b" ", tenant.ingest_key)
    assert r.status_code == 413
    assert r.json() == {"message": "Payload Too Large", "reason": r.json()["reason"]}
    assert r.headers["access-control-allow-origin"] == "*"


def test_chunked_body_over_6mb_is_413_and_not_read_to_the_end(
    server: LiveServer, tenant: Tenant, ds: str
) -> None:
    sent = 0
    total = 256 * MIB

    def chunks() -> Iterator[bytes]:
        nonlocal sent
        block = b" " * (256 * 1024)
        while sent < total:
            sent += len(block)
            yield block

    r = post(server, f"/events/v1/{ds}", chunks(), tenant.ingest_key)
    assert r.status_code == 413
    assert r.json()["message"] == "Payload Too Large"
    assert sent < total / 2  # the server stopped reading long before the end


def test_gzip_that_inflates_past_6mb_is_413(server: LiveServer, tenant: Tenant, ds: str) -> None:
    bomb = gzip.compress(b"[" + b" " * (64 * MIB) + b"]", compresslevel=9)
    assert len(bomb) < MIB
    headers = {"content-encoding": "gzip"}
    r = post(server, f"/events/v1/{ds}", bomb, tenant.ingest_key, headers)
    assert r.status_code == 413
    # The same as a chunked stream, with no Content-Length at all.
    stream = (bomb[i : i + 4096] for i in range(0, len(bomb), 4096))
    r = post(server, f"/events/v1/{ds}", stream, tenant.ingest_key, headers)
    assert r.status_code == 413
    assert r.json()["message"] == "Payload Too Large"


# --- 500 --------------------------------------------------------------------------------


def test_an_unusable_events_store_is_a_bare_500(tmp_path: Path) -> None:
    private = launch(tmp_path / "broken")
    try:
        tenant = private.new_tenant()
        assert private.send(tenant.ingest_key, "logs", [{"a": 1}]).status_code == 202
        # Take the engine's table directories away, leaving files in their place:
        # every later insert fails inside ClickHouse.
        for marker in (tmp_path / "broken" / "chdb" / "store").glob("*/*/format_version.txt"):
            shutil.rmtree(marker.parent)
            marker.parent.write_text("not a directory")
        # A large batch is inserted before it is acknowledged: the failure is its answer.
        r = private.send(tenant.ingest_key, "logs", [{"a": 2}] * 5_000)
        assert r.status_code == 500
        assert r.json() == {"message": "Internal Error"}
        assert r.headers["access-control-allow-origin"] == "*"
        assert "Traceback" not in r.text and "Exception" not in r.text
        # A small one is acknowledged from the write-ahead log; the background INSERT's
        # failures show on /metrics (and in the log), and it is tried again.
        assert private.send(tenant.ingest_key, "logs", [{"a": 3}]).status_code == 202
        deadline = time.monotonic() + 60
        while "limelight_ingest_buffer_insert_failures_total 0.0" in (
            text := web.get(f"{private.url}/metrics", timeout=30).text
        ):
            assert time.monotonic() < deadline, "no failed INSERT was counted"
            time.sleep(0.1)
        assert "limelight_ingest_buffer_insert_failures_total" in text
        assert "the events store failed an INSERT" in private.log_path.read_text()
        # The server keeps answering.
        assert private.send("ll_pk_wrong", "logs", [{"a": 3}]).status_code == 401
    finally:
        # Ended at once: on SIGTERM it would spend the write-ahead log's 30 s of closing
        # on INSERTs that cannot succeed (the test's stop gave up after 20 s).
        private.kill()
        private.stop()


# --- odd inputs real clients send --------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "application/json",
        "application/json; charset=utf-8",
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "application/octet-stream",
    ],
)
def test_any_content_type_is_accepted(
    server: LiveServer, tenant: Tenant, ds: str, content_type: str | None
) -> None:
    headers = {"content-type": content_type} if content_type else {}
    r = post(server, f"/events/v1/{ds}", b'[{"ct": 1}]', tenant.ingest_key, headers)
    assert r.status_code == 202


def test_gzip_body_is_accepted_and_stored(server: LiveServer, tenant: Tenant, ds: str) -> None:
    events = [{"i": i, "message": "compressed " * 20} for i in range(500)]
    data = gzip.compress(json.dumps(events).encode())
    r = post(server, f"/events/v1/{ds}", data, tenant.ingest_key, {"content-encoding": "gzip"})
    assert r.status_code == 202
    stored = server.read(tenant.admin_key, ds)
    assert sorted(as_sent(e)["i"] for e in stored) == list(range(500))


def test_chunked_body_without_content_length_is_accepted(
    server: LiveServer, tenant: Tenant, ds: str
) -> None:
    payload = json.dumps([{"i": i} for i in range(2000)]).encode()
    r = post(
        server,
        f"/events/v1/{ds}",
        (payload[i : i + 1000] for i in range(0, len(payload), 1000)),
        tenant.ingest_key,
    )
    assert r.status_code == 202
    assert len(server.read(tenant.admin_key, ds, limit=5000)) == 2000


def test_chunked_gzip_is_accepted(server: LiveServer, tenant: Tenant, ds: str) -> None:
    data = gzip.compress(json.dumps([{"i": i} for i in range(300)]).encode())
    stream = (data[i : i + 512] for i in range(0, len(data), 512))
    r = post(server, f"/events/v1/{ds}", stream, tenant.ingest_key, {"content-encoding": "gzip"})
    assert r.status_code == 202
    assert len(server.read(tenant.admin_key, ds)) == 300


@pytest.mark.parametrize(
    ("headers", "event", "service", "namespace"),
    [
        ({"x-service": "undefined", "x-namespace": "undefined"}, {}, "default", "default"),
        ({"x-service": "undefined"}, {"service": "from-event"}, "from-event", "default"),
        ({"x-service": "team/api", "x-namespace": "a/b/c"}, {}, "team/api", "a/b/c"),
        ({"x-service": "api", "x-namespace": "jobs"}, {"service": "x"}, "api", "jobs"),
    ],
)
def test_service_and_namespace_headers(
    server: LiveServer,
    tenant: Tenant,
    ds: str,
    headers: dict[str, str],
    event: dict[str, Any],
    service: str,
    namespace: str,
) -> None:
    assert server.send(tenant.ingest_key, ds, [event], headers).status_code == 202
    (stored,) = server.read(tenant.admin_key, ds)
    assert (stored["_service"], stored["_namespace"]) == (service, namespace)


def post_raw_headers(
    server: LiveServer, tenant: Tenant, ds: str, headers: list[tuple[bytes, bytes]]
) -> httpx.Response:
    """One event with headers sent as the bytes given (httpx sends str values as ASCII)."""
    all_headers = [(b"x-api-key", tenant.ingest_key.encode()), *headers]
    return web.post(f"{server.url}/events/v1/{ds}", content=b'[{"a": 1}]', headers=all_headers)


def test_service_and_namespace_headers_are_read_as_utf8(
    server: LiveServer, tenant: Tenant, ds: str
) -> None:
    headers = [(b"x-service", "café".encode()), (b"x-namespace", "日本".encode())]
    r = post_raw_headers(server, tenant, ds, headers)
    assert r.status_code == 202, r.text
    (stored,) = server.read(tenant.admin_key, ds)
    assert (stored["_service"], stored["_namespace"]) == ("café", "日本")


@pytest.mark.parametrize(
    ("header", "value", "reason"),
    [
        ("x-service", b"caf\xe9", "x-service is not UTF-8"),
        ("x-namespace", b"\xff\xfe", "x-namespace is not UTF-8"),
        ("x-service", b"s" * 257, "x-service is 257 characters; at most 256"),
        ("x-namespace", "é".encode() * 300, "x-namespace is 300 characters; at most 256"),
    ],
)
def test_a_service_header_that_cannot_be_a_name_is_refused(
    server: LiveServer, tenant: Tenant, ds: str, header: str, value: bytes, reason: str
) -> None:
    r = post_raw_headers(server, tenant, ds, [(header.encode(), value)])
    assert r.status_code == 400
    assert reason in r.text
    assert server.read(tenant.admin_key, ds) == []


def test_secrets_are_redacted_at_any_depth(server: LiveServer, tenant: Tenant, ds: str) -> None:
    event = {
        "message": "login",
        "Password": "hunter2",
        "token_count": 5,
        "req": {"headers": {"Authorization": "Bearer x", "X-Api-Key": "k"}},
        "list": [{"refresh_token": "r"}],
    }
    assert server.send(tenant.ingest_key, ds, [event]).status_code == 202
    (stored,) = server.read(tenant.admin_key, ds)
    assert as_sent(stored) == {
        "message": "login",
        "Password": "[REDACTED]",
        "token_count": 5,
        "req": {"headers": {"Authorization": "[REDACTED]", "X-Api-Key": "[REDACTED]"}},
        "list": [{"refresh_token": "[REDACTED]"}],
    }


def test_an_environment_with_redaction_off_keeps_values(server: LiveServer) -> None:
    ws = server.cli_json("workspaces", "create", "ws-noredact-" + uuid.uuid4().hex[:8])
    env = server.cli_json(
        "environments", "create", "dev", "--workspace", ws["workspaceId"], "--no-redact"
    )
    common = ["--workspace", ws["workspaceId"], "--environment", env["environmentId"]]
    ingest = server.cli_json("keys", "create", "--kind", "ingest", *common)["key"]
    admin = server.cli_json("keys", "create", "--kind", "admin", *common)["key"]
    assert server.send(ingest, "auth", [{"password": "visible"}]).status_code == 202
    assert as_sent(server.read(admin, "auth")[0]) == {"password": "visible"}


def test_redaction_can_be_switched_for_an_existing_environment(
    server: LiveServer, tenant: Tenant
) -> None:
    env = ["--workspace", tenant.workspace_id]
    server.cli("environments", "redaction", tenant.environment_id, "--off", *env)
    assert server.send(tenant.ingest_key, "switch", [{"token": "t1"}]).status_code == 202
    server.cli("environments", "redaction", tenant.environment_id, "--on", *env)
    assert server.send(tenant.ingest_key, "switch", [{"token": "t2"}]).status_code == 202
    newest_first = [as_sent(e) for e in server.read(tenant.admin_key, "switch")]
    assert newest_first == [{"token": "[REDACTED]"}, {"token": "t1"}]


# --- CORS ---------------------------------------------------------------------------------


def test_cors_preflight_allows_any_origin_post_and_the_headers(server: LiveServer) -> None:
    r = web.options(
        f"{server.events_url}/v1/logs",
        headers={
            "Origin": "https://shop.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "x-api-key, content-type, x-service",
        },
    )
    assert r.status_code == 204
    assert r.headers["access-control-allow-origin"] == "*"
    assert "POST" in r.headers["access-control-allow-methods"]
    allowed = {h.strip().lower() for h in r.headers["access-control-allow-headers"].split(",")}
    assert {
        "x-api-key",
        "x-service",
        "x-namespace",
        "content-type",
        "content-encoding",
    } <= allowed
    assert "access-control-allow-credentials" not in r.headers


def test_preflight_needs_no_key_even_on_a_bad_path(server: LiveServer) -> None:
    r = web.options(f"{server.events_url}/v1/anything-here", headers={"Origin": "https://a.b"})
    assert r.status_code == 204
    assert r.headers["access-control-allow-origin"] == "*"


def test_cors_header_is_on_every_kind_of_response(
    server: LiveServer, tenant: Tenant, ds: str
) -> None:
    origin = {"Origin": "https://shop.example"}
    responses = [
        post(server, f"/events/v1/{ds}", b'[{"a":1}]', tenant.ingest_key, origin),  # 202
        post(server, f"/events/v1/{ds}", b"[1]", tenant.ingest_key, origin),  # 400 partial
        post(server, f"/events/v1/{ds}", b"nope", tenant.ingest_key, origin),  # 400
        post(server, f"/events/v1/{ds}", b"[]", "ll_pk_bad", origin),  # 401
        web.get(f"{server.events_url}/v1/c", headers=origin),  # 405
    ]
    assert [r.status_code for r in responses] == [202, 400, 400, 401, 405]
    assert all(r.headers.get("access-control-allow-origin") == "*" for r in responses)


# --- tenancy and keys ---------------------------------------------------------------------


def test_two_environments_never_see_each_others_events(server: LiveServer) -> None:
    ws = server.cli_json("workspaces", "create", "ws-two-envs-" + uuid.uuid4().hex[:8])
    keys: dict[str, dict[str, str]] = {}
    for name in ("prod", "staging"):
        env = server.cli_json("environments", "create", name, "--workspace", ws["workspaceId"])
        common = ["--workspace", ws["workspaceId"], "--environment", env["environmentId"]]
        keys[name] = {
            kind: server.cli_json("keys", "create", "--kind", kind, *common)["key"]
            for kind in ("ingest", "admin")
        }
    for name in ("prod", "staging"):
        events = [{"env": name, "i": i} for i in range(3)]
        assert server.send(keys[name]["ingest"], "shared", events).status_code == 202
    for name in ("prod", "staging"):
        stored = server.read(keys[name]["admin"], "shared")
        assert sorted((e["env"], e["i"]) for e in stored) == [(name, i) for i in range(3)]


def test_another_workspace_is_just_as_separate(
    server: LiveServer, tenant: Tenant, ds: str, other_tenant: Tenant
) -> None:
    assert server.send(tenant.ingest_key, ds, [{"who": "me"}]).status_code == 202
    assert server.send(other_tenant.ingest_key, ds, [{"who": "other"}]).status_code == 202
    assert [e["who"] for e in server.read(tenant.admin_key, ds)] == ["me"]
    assert [e["who"] for e in server.read(other_tenant.admin_key, ds)] == ["other"]
    # Not in any other dataset of the other workspace either.
    assert all(e.get("who") != "me" for e in server.read(other_tenant.admin_key))


def test_a_revoked_key_is_refused_on_the_next_request(
    server: LiveServer, tenant: Tenant, ds: str
) -> None:
    new = server.cli_json(
        "keys",
        "create",
        "--kind",
        "ingest",
        "--workspace",
        tenant.workspace_id,
        "--environment",
        tenant.environment_id,
    )
    assert server.send(new["key"], ds, [{"before": True}]).status_code == 202
    server.cli("keys", "revoke", new["id"])
    r = server.send(new["key"], ds, [{"after": True}])
    assert r.status_code == 401
    assert r.json() == {"message": "Unauthorised", "reason": "this API key has been revoked"}
    # Only the revoked key stops working.
    assert server.send(tenant.ingest_key, ds, [{"other": True}]).status_code == 202
    stored = [as_sent(e) for e in server.read(tenant.admin_key, ds)]
    assert {"after": True} not in stored


# --- fidelity --------------------------------------------------------------------------------


def test_events_read_back_equal_to_what_was_sent(
    server: LiveServer, tenant: Tenant, ds: str
) -> None:
    events: list[dict[str, Any]] = [
        {"http.method": "GET", "http": {"status": 200}, "a.b.c": {"d.e": 1}},
        {"nested": {"deep": {"deeper": {"list": [1, [2, [3, {}]], {"x": None}]}}}},
        {"null": None, "empty": {}, "empty_list": [], "bool": False, "zero": 0},
        {"big": 2**70, "neg_big": -(2**63) - 5, "u64": 2**64 - 1, "float": 1.5e300},
        {"ns": 1_700_000_000_123_456_789, "small": -1, "pi": 3.141592653589793},
        {"unicode": "héllo wörld ✓ 日本語 עברית 🚀", "emoji key 🔑": "v", "ß": "ẞ"},
        {"escapes": 'tab\there "quoted" back\\slash\nnewline \u0001 \u2028', "e\tk": 1},
        {"same": "mixed", "duration": "12ms"},
        {"same": 5, "duration": 12},
    ]
    r = server.send(tenant.ingest_key, ds, events)
    assert r.status_code == 202
    stored = [as_sent(e) for e in server.read(tenant.admin_key, ds)]
    key = json.dumps
    assert sorted(stored, key=key) == sorted(events, key=key)


def test_big_integers_survive_the_text_not_just_the_value(
    server: LiveServer, tenant: Tenant, ds: str
) -> None:
    raw = b'[{"id": 123456789012345678901234567890, "n": -99999999999999999999}]'
    assert post(server, f"/events/v1/{ds}", raw, tenant.ingest_key).status_code == 202
    r = web.get(
        f"{server.url}/v1/events",
        params={"dataset": ds},
        headers={"Authorization": tenant.admin_key},
    )
    assert b"123456789012345678901234567890" in r.content
    assert b"-99999999999999999999" in r.content


# --- the events app served alone ------------------------------------------------------------


def test_events_app_served_alone_at_root(tmp_path: Path) -> None:
    alone = launch(tmp_path / "alone", serve_args=("--app", "events"))
    try:
        tenant = alone.new_tenant()
        key = {"x-api-key": tenant.ingest_key}
        r = web.post(f"{alone.url}/v1/logs", json=[{"alone": True}], headers=key)
        assert r.status_code == 202
        assert r.json() == {"message": "Request Accepted"}
        # Nothing but the Events API lives there.
        r = web.post(f"{alone.url}/events/v1/logs", json=[{"alone": False}], headers=key)
        assert r.status_code == 400
        assert web.get(f"{alone.url}/v1/logs").status_code == 405
        assert web.options(f"{alone.url}/v1/logs").headers["access-control-allow-origin"] == "*"
    finally:
        alone.stop()
    # The same data dir served whole shows the event was stored.
    alone.serve_args = ()
    alone.start()
    try:
        assert [as_sent(e) for e in alone.read(tenant.admin_key)] == [{"alone": True}]
    finally:
        alone.stop()
