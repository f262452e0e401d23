"""OTLP/HTTP as the specification describes it, spoken directly over HTTP."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from google.rpc.status_pb2 import Status as RpcStatus
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from limelight.auth.api_keys import NOT_A_KEY
from tests import web
from tests.support import CLI, LiveServer, Tenant, free_port
from tests.unit.ingest.otlp_builders import TRACE_ID, logs, span, traces

PROTOBUF = {"content-type": "application/x-protobuf"}
JSON = {"content-type": "application/json"}
NOW_NS = time.time_ns()


@pytest.fixture(scope="module")
def tenant(server: LiveServer) -> Tenant:
    """One tenant for the module (creating one takes seconds); each test has its dataset."""
    return server.new_tenant()


def post(
    server: LiveServer,
    tenant: Tenant,
    path: str,
    body: Any,
    headers: dict[str, str],
    dataset: str | None = None,
) -> httpx.Response:
    extra = {"x-api-key": tenant.ingest_key}
    if dataset:
        extra["x-dataset"] = dataset
    return web.post(
        f"{server.url}/otel{path}", content=body, headers={**extra, **headers}, timeout=30
    )


def stored(server: LiveServer, tenant: Tenant, dataset: str) -> list[dict[str, Any]]:
    r = web.get(
        f"{server.url}/v1/events",
        params={"dataset": dataset, "limit": 1000},
        headers={"Authorization": tenant.admin_key},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    events: list[dict[str, Any]] = r.json()["events"]
    return events


def span_body(*names: str, **resource: str) -> bytes:
    spans = [span(n, start=NOW_NS, end=NOW_NS + 3_000_000) for n in names]
    data: bytes = traces(spans, {"service.name": "api", **resource}).SerializeToString()
    return data


def otlp_json_spans(name: str) -> dict[str, Any]:
    """The shape of the OTLP specification's JSON example (hex ids, enums as numbers)."""
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "json-svc"}}]
                },
                "scopeSpans": [
                    {
                        "scope": {"name": "my.library", "version": "1.0.0"},
                        "spans": [
                            {
                                "traceId": "5B8EFFF798038103D269B633813FC60C",
                                "spanId": "EEE19B7EC3C1B174",
                                "parentSpanId": "EEE19B7EC3C1B173",
                                "name": name,
                                "startTimeUnixNano": str(NOW_NS),
                                "endTimeUnixNano": str(NOW_NS + 1_500_000),
                                "kind": 2,
                                "attributes": [
                                    {"key": "my.span.attr", "value": {"stringValue": "v"}},
                                    {"key": "http.status_code", "value": {"intValue": "200"}},
                                ],
                            }
                        ],
                    }
                ],
            }
        ]
    }


# -- success, in each encoding ------------------------------------------------


def test_protobuf_export_gets_an_empty_protobuf_response(
    server: LiveServer, tenant: Tenant
) -> None:
    r = post(server, tenant, "/v1/traces", span_body("a", "b"), PROTOBUF)
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/x-protobuf"
    response = ExportTraceServiceResponse.FromString(r.content)
    assert not response.HasField("partial_success")
    events = stored(server, tenant, "otel")
    assert sorted(e["name"] for e in events) == ["a", "b"]
    assert {e["_dataset"] for e in events} == {"otel"}


def test_json_export_with_hex_ids(server: LiveServer, tenant: Tenant) -> None:
    body = orjson.dumps(otlp_json_spans("json span"))
    r = post(server, tenant, "/v1/traces", body, JSON, dataset="json")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.json() == {}
    [event] = stored(server, tenant, "json")
    assert event["traceId"] == "5b8efff798038103d269b633813fc60c"
    assert event["spanId"] == "eee19b7ec3c1b174"
    assert event["parentSpanId"] == "eee19b7ec3c1b173"
    assert event["kind"] == "SERVER"
    assert event["duration"] == 1.5
    assert event["attributes"] == {"my": {"span": {"attr": "v"}}, "http": {"status_code": 200}}
    assert event["_service"] == "json-svc"
    assert event["_timestamp"] == NOW_NS // 1_000_000


def test_json_logs_and_metrics(server: LiveServer, tenant: Tenant) -> None:
    log_doc = {
        "resourceLogs": [
            {
                "scopeLogs": [
                    {
                        "logRecords": [
                            {
                                "timeUnixNano": str(NOW_NS),
                                "severityNumber": 13,
                                "severityText": "WARN",
                                "traceId": TRACE_ID.hex(),
                                "body": {"stringValue": "disk almost full"},
                            }
                        ]
                    }
                ]
            }
        ]
    }
    metric_doc = {
        "resourceMetrics": [
            {
                "scopeMetrics": [
                    {
                        "metrics": [
                            {
                                "name": "disk.used",
                                "unit": "By",
                                "gauge": {
                                    "dataPoints": [{"timeUnixNano": str(NOW_NS), "asInt": "1024"}]
                                },
                            }
                        ]
                    }
                ]
            }
        ]
    }
    assert post(server, tenant, "/v1/logs", orjson.dumps(log_doc), JSON, "jl").status_code == 200
    assert post(server, tenant, "/v1/metrics", orjson.dumps(metric_doc), JSON, "jm").json() == {}
    [log] = stored(server, tenant, "jl")
    assert (log["message"], log["level"], log["traceId"]) == (
        "disk almost full",
        "warn",
        TRACE_ID.hex(),
    )
    [point] = stored(server, tenant, "jm")
    assert (point["name"], point["unit"], point["type"], point["value"]) == (
        "disk.used",
        "By",
        "gauge",
        1024,
    )


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_gzip_bodies(server: LiveServer, tenant: Tenant, encoding: str) -> None:
    if encoding == "protobuf":
        body, headers = span_body("zipped"), PROTOBUF
    else:
        body, headers = orjson.dumps(otlp_json_spans("zipped")), JSON
    dataset = f"gz-{encoding}"
    zipped = gzip.compress(body)
    r = post(server, tenant, "/v1/traces", zipped, {**headers, "content-encoding": "gzip"}, dataset)
    assert r.status_code == 200
    assert [e["name"] for e in stored(server, tenant, dataset)] == ["zipped"]


def test_chunked_body(server: LiveServer, tenant: Tenant) -> None:
    body = span_body(*(f"chunk-{i}" for i in range(50)))

    def pieces() -> Iterator[bytes]:
        for i in range(0, len(body), 100):
            yield body[i : i + 100]

    r = post(server, tenant, "/v1/traces", pieces(), PROTOBUF, "chunked")
    assert r.request.headers["transfer-encoding"] == "chunked"
    assert r.status_code == 200
    assert len(stored(server, tenant, "chunked")) == 50


# -- partial success -----------------------------------------------------------


def test_partial_success_in_protobuf(server: LiveServer, tenant: Tenant) -> None:
    request = traces([span("good"), span("zero trace id", trace_id=bytes(16)), span("ok 2")])
    r = post(server, tenant, "/v1/traces", request.SerializeToString(), PROTOBUF, "partial")
    assert r.status_code == 200
    partial = ExportTraceServiceResponse.FromString(r.content).partial_success
    assert partial.rejected_spans == 1
    assert "invalid trace or span id" in partial.error_message
    assert sorted(e["name"] for e in stored(server, tenant, "partial")) == ["good", "ok 2"]


def test_partial_success_in_json(server: LiveServer, tenant: Tenant) -> None:
    doc = otlp_json_spans("kept")
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    big = [{"key": "payload", "value": {"stringValue": "x" * 300_000}}]
    spans.append({**spans[0], "name": "too big", "attributes": big})
    r = post(server, tenant, "/v1/traces", orjson.dumps(doc), JSON, "partial-json")
    assert r.status_code == 200
    partial = r.json()["partialSuccess"]
    assert int(partial["rejectedSpans"]) == 1
    assert "262144 bytes" in partial["errorMessage"]
    assert [e["name"] for e in stored(server, tenant, "partial-json")] == ["kept"]


def test_an_invalid_id_is_rejected_naming_how_the_encoding_writes_ids(
    server: LiveServer, tenant: Tenant
) -> None:
    doc = otlp_json_spans("kept")
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for name, trace_id in [
        ("31 hex digits", TRACE_ID.hex()[:-1]),
        ("30 hex digits", TRACE_ID.hex()[:-2]),  # json_format's base64 refused the body
        ("not an id", "not an id!"),
    ]:
        spans.append({**spans[0], "name": name, "traceId": trace_id})
    r = post(server, tenant, "/v1/traces", orjson.dumps(doc), JSON, "ids-json")
    assert r.status_code == 200, r.text
    partial = r.json()["partialSuccess"]
    assert int(partial["rejectedSpans"]) == 3
    assert partial["errorMessage"] == (
        "spans rejected: 3 spans with an invalid trace or span id (OTLP JSON writes ids in"
        " hex: a traceId of 32 hex digits, a spanId of 16; an id of all zeros is none)"
    )
    assert [e["name"] for e in stored(server, tenant, "ids-json")] == ["kept"]

    request = traces([span("kept"), span("short", trace_id=TRACE_ID[:15])])
    r = post(server, tenant, "/v1/traces", request.SerializeToString(), PROTOBUF, "ids-pb")
    partial_pb = ExportTraceServiceResponse.FromString(r.content).partial_success
    assert partial_pb.rejected_spans == 1
    assert "OTLP protobuf writes ids as bytes: a trace_id of 16, a span_id of 8" in (
        partial_pb.error_message
    )

    records = {"resourceLogs": [{"scopeLogs": [{"logRecords": [
        {"body": {"stringValue": "kept"}, "traceId": TRACE_ID.hex()},
        {"body": {"stringValue": "bad"}, "traceId": "xyz"},
    ]}]}]}  # fmt: skip
    r = post(server, tenant, "/v1/logs", orjson.dumps(records), JSON, "ids-logs")
    assert r.status_code == 200, r.text
    assert (
        "log records with an invalid trace or span id (OTLP JSON writes ids in hex"
        in (r.json()["partialSuccess"]["errorMessage"])
    )
    assert [e["message"] for e in stored(server, tenant, "ids-logs")] == ["kept"]


def test_spans_nested_too_deep_are_rejected_on_a_connection_that_stays_open(
    server: LiveServer, tenant: Tenant
) -> None:
    """A 300-dot key, a 5,000-dot secret key and JSON 1,000 levels deep each made a 500."""
    deep = [
        span("300 dots", start=NOW_NS, attributes={"a" + ".a" * 300: 1}),
        span("secret", start=NOW_NS, attributes={"a." * 5000 + "token": "t"}),
        span("kept", start=NOW_NS),
    ]
    headers = {"x-api-key": tenant.ingest_key, "x-dataset": "deep-spans"}
    with web.Client(base_url=f"{server.url}/otel", headers=headers, timeout=30) as client:
        r = client.post("/v1/traces", content=traces(deep).SerializeToString(), headers=PROTOBUF)
        assert r.status_code == 200, r.text
        partial = ExportTraceServiceResponse.FromString(r.content).partial_success
        assert partial.rejected_spans == 2
        assert "more than 128 levels deep" in partial.error_message
        doc = orjson.dumps(otlp_json_spans("deep json"))
        # An unknown field is ignored, within the decoder's 200 levels; deeper, the whole
        # body is refused (the protobuf JSON decoder failed on such a body with a 500).
        unknown = b'{"unknown": ' + b"[" * 150 + b"]" * 150 + b","
        r = client.post("/v1/traces", content=unknown + doc[1:], headers=JSON)
        assert r.status_code == 200, r.text
        deeper = b'{"unknown": ' + b"[" * 1000 + b"]" * 1000 + b","
        r = client.post("/v1/traces", content=deeper + doc[1:], headers=JSON)
        assert r.status_code == 400 and "200 levels" in r.json()["reason"], r.text
    assert sorted(e["name"] for e in stored(server, tenant, "deep-spans")) == ["deep json", "kept"]


def test_partial_success_for_logs(server: LiveServer, tenant: Tenant) -> None:
    request = logs([LogRecord(trace_id=b"\x01\x02"), LogRecord(time_unix_nano=NOW_NS)])
    r = post(server, tenant, "/v1/logs", request.SerializeToString(), PROTOBUF, "partial-logs")
    assert ExportLogsServiceResponse.FromString(r.content).partial_success.rejected_log_records == 1
    assert len(stored(server, tenant, "partial-logs")) == 1


# -- errors ----------------------------------------------------------------------


def rpc_status(r: httpx.Response) -> RpcStatus:
    assert r.headers["content-type"] == "application/x-protobuf"
    return RpcStatus.FromString(r.content)


def test_undecodable_protobuf_is_400_with_a_status(server: LiveServer, tenant: Tenant) -> None:
    r = post(server, tenant, "/v1/traces", b"\xff\xff\xff\xff", PROTOBUF, "bad")
    assert r.status_code == 400
    status = rpc_status(r)
    assert status.code == 3  # INVALID_ARGUMENT
    assert "protobuf" in status.message


@pytest.mark.parametrize(
    "body",
    [b"{not json", b"[]", b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 1}]}]}]}'],
)
def test_bad_json_is_400(server: LiveServer, tenant: Tenant, body: bytes) -> None:
    r = post(server, tenant, "/v1/traces", body, JSON, "bad")
    assert r.status_code == 400
    assert r.headers["content-type"] == "application/json"
    assert r.json()["message"] == "Bad Request"
    assert r.json()["code"] == 3
    assert r.json()["reason"]


def test_broken_gzip_is_400(server: LiveServer, tenant: Tenant) -> None:
    zipped = gzip.compress(span_body("x"))[:-20]
    r = post(server, tenant, "/v1/traces", zipped, {**PROTOBUF, "content-encoding": "gzip"})
    assert r.status_code == 400


@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", None])
def test_other_content_types_are_415(
    server: LiveServer, tenant: Tenant, content_type: str | None
) -> None:
    headers = {"content-type": content_type} if content_type else {}
    r = post(server, tenant, "/v1/traces", span_body("x"), headers, "bad")
    assert r.status_code == 415
    assert r.json()["message"] == "Unsupported Media Type"


@pytest.mark.parametrize("key", [None, "ll_pk_not-a-real-key"])
def test_missing_or_wrong_key_is_401(server: LiveServer, key: str | None) -> None:
    headers = {**PROTOBUF, **({"x-api-key": key} if key else {})}
    r = web.post(f"{server.url}/otel/v1/traces", content=span_body("x"), headers=headers)
    assert r.status_code == 401
    assert rpc_status(r).code == 16  # UNAUTHENTICATED
    r = web.post(f"{server.url}/otel/v1/logs", content=b"{}", headers={**JSON, "x-api-key": "x"})
    assert r.status_code == 401
    assert r.json() == {"message": "Unauthorised", "reason": NOT_A_KEY, "code": 16}


def test_admin_keys_may_send_too(server: LiveServer, tenant: Tenant) -> None:
    r = web.post(
        f"{server.url}/otel/v1/traces",
        content=span_body("by admin"),
        headers={**PROTOBUF, "x-api-key": tenant.admin_key, "x-dataset": "admin-sent"},
    )
    assert r.status_code == 200
    assert [e["name"] for e in stored(server, tenant, "admin-sent")] == ["by admin"]


def test_oversized_after_decompression_is_413(server: LiveServer, tenant: Tenant) -> None:
    huge = traces([span("huge", attributes={"blob": "a" * (7 * 1024 * 1024)})])
    zipped = gzip.compress(huge.SerializeToString())
    assert len(zipped) < 100_000
    headers = {**PROTOBUF, "content-encoding": "gzip"}
    r = post(server, tenant, "/v1/traces", zipped, headers, "huge")
    assert r.status_code == 413
    assert rpc_status(r).code == 8  # RESOURCE_EXHAUSTED
    assert stored(server, tenant, "huge") == []


def test_declared_length_over_the_limit_is_413(server: LiveServer, tenant: Tenant) -> None:
    body = b"\x00" * (6 * 1024 * 1024 + 1)
    r = post(server, tenant, "/v1/traces", body, JSON, "huge")
    assert r.status_code == 413


def test_other_tenants_see_nothing(
    server: LiveServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    assert post(server, tenant, "/v1/traces", span_body("mine"), PROTOBUF, "iso").status_code == 200
    assert stored(server, other_tenant, "iso") == []
    assert [e["name"] for e in stored(server, tenant, "iso")] == ["mine"]


# -- paths and datasets ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "dataset"),
    [("/v1", "path-v1"), ("/v1/v1/traces", "path-v1v1"), ("/v1/traces/", "path-slash")],
)
def test_trace_paths(server: LiveServer, tenant: Tenant, path: str, dataset: str) -> None:
    r = post(server, tenant, path, span_body("p"), PROTOBUF, dataset)
    assert r.status_code == 200
    assert [e["name"] for e in stored(server, tenant, dataset)] == ["p"]


def test_doubled_prefix_for_logs(server: LiveServer, tenant: Tenant) -> None:
    body = logs([LogRecord(time_unix_nano=NOW_NS)]).SerializeToString()
    assert post(server, tenant, "/v1/v1/logs", body, PROTOBUF, "path-logs").status_code == 200
    assert len(stored(server, tenant, "path-logs")) == 1


def test_unknown_path_404_and_wrong_method_405(server: LiveServer, tenant: Tenant) -> None:
    assert post(server, tenant, "/v1/profiles", b"", PROTOBUF).status_code == 404
    assert post(server, tenant, "/v2/traces", b"", PROTOBUF).status_code == 404
    r = web.get(f"{server.url}/otel/v1/traces", headers={"x-api-key": tenant.ingest_key})
    assert r.status_code == 405
    assert r.json()["message"] == "Method Not Allowed"
    # The server's address without /otel, as an SDK's endpoint: the answer says where.
    headers = {**PROTOBUF, "x-api-key": tenant.ingest_key}
    bare = web.post(f"{server.url}/v1/traces", content=span_body("x"), headers=headers)
    assert bare.status_code == 404
    assert "send to /otel/v1/traces" in bare.json()["reason"]
    events = web.post(f"{server.url}/v1/logs", json=[{"a": 1}], headers=headers)
    assert events.status_code == 404
    assert "events of a dataset are sent to /events/v1/<dataset>" in events.json()["reason"]
    assert "send to /otel/v1/logs" in events.json()["reason"]


def test_dataset_headers(server: LiveServer, tenant: Tenant) -> None:
    baselime = {**PROTOBUF, "x-baselime-dataset": "from-baselime-header"}
    assert post(server, tenant, "/v1/traces", span_body("b"), baselime).status_code == 200
    assert [e["_dataset"] for e in stored(server, tenant, "from-baselime-header")] == [
        "from-baselime-header"
    ]
    bad = post(server, tenant, "/v1/traces", span_body("c"), PROTOBUF, dataset="no spaces allowed")
    assert bad.status_code == 400


def test_cors_preflight(server: LiveServer) -> None:
    r = web.options(
        f"{server.url}/otel/v1/traces",
        headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"},
    )
    assert r.status_code == 204
    assert r.headers["access-control-allow-origin"] == "*"
    assert "x-api-key" in r.headers["access-control-allow-headers"]


# -- served alone, and shedding load -----------------------------------------------------


@pytest.fixture(scope="module")
def otel_alone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """``limelight serve --app otel`` with room for one request at a time."""
    data_dir: Path = tmp_path_factory.mktemp("otel-alone")
    port = free_port()
    env = {
        **os.environ,
        "LIMELIGHT_DATA_DIR": str(data_dir),
        "LIMELIGHT_PORT": str(port),
        "LIMELIGHT_HOST": "127.0.0.1",
        "LIMELIGHT_OTEL_MAX_IN_FLIGHT": "1",
        # The shedding test reads the requests in flight from /metrics.
        "LIMELIGHT_METRICS_ALLOW": "127.0.0.1",
    }
    boot = subprocess.run([*CLI, "bootstrap", "--json"], env=env, capture_output=True, check=True)
    key = json.loads(boot.stdout)["ingestKey"]
    server = LiveServer(data_dir=data_dir, port=port, env=env)
    with (data_dir / "server.log").open("ab") as log:
        server.proc = subprocess.Popen(
            [*CLI, "serve", "--app", "otel"], env=env, stdout=log, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + 60
    while True:
        assert server.proc.poll() is None, (data_dir / "server.log").read_text()
        assert time.monotonic() < deadline, "the OTLP server did not start"
        try:
            web.get(f"{server.url}/v1/traces", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.2)
    yield server.url, key
    server.stop()


def test_served_alone_at_the_root(otel_alone: tuple[str, str]) -> None:
    url, key = otel_alone
    r = web.post(
        f"{url}/v1/traces", content=span_body("alone"), headers={**PROTOBUF, "x-api-key": key}
    )
    assert r.status_code == 200
    r = web.post(f"{url}/v1/v1/logs", content=b"{}", headers={**JSON, "x-api-key": key})
    assert r.status_code == 200 and r.json() == {}
    assert web.post(f"{url}/otel/v1/traces", content=b"", headers=PROTOBUF).status_code == 404


def _otlp_in_flight(url: str) -> bool:
    """Whether the server's /metrics counts an OTLP request in flight."""
    scrape = web.get(f"{url}/metrics", timeout=30)
    assert scrape.status_code == 200, scrape.text
    counts = [
        float(line.rsplit(" ", 1)[1])
        for line in scrape.text.splitlines()
        if line.startswith("limelight_otlp_requests_in_flight")
    ]
    assert counts, "no limelight_otlp_requests_in_flight in /metrics"
    return any(count >= 1 for count in counts)


def test_load_is_shed_with_retry_after_and_the_sdk_retries(otel_alone: tuple[str, str]) -> None:
    url, key = otel_alone
    headers = {**PROTOBUF, "x-api-key": key}
    # A large request (about a second to store on an idle machine) holds the one slot;
    # the slot is taken once a body is read, so a stalled upload would hold nothing.
    now = time.time_ns()
    big = traces(
        [span("bulk", span_id=(n + 1).to_bytes(8, "big"), start=now) for n in range(24_000)],
        {"service.name": "api"},
    ).SerializeToString()
    answers: list[httpx.Response] = []
    holder = threading.Thread(
        target=lambda: answers.append(
            web.post(f"{url}/v1/traces", content=big, headers=headers, timeout=60)
        )
    )
    holder.start()
    # Until its upload is in and it is being stored (the scrape takes no slot).
    deadline = time.monotonic() + 30
    while not _otlp_in_flight(url):
        assert holder.is_alive(), f"the large request ended before it was seen: {answers}"
        assert time.monotonic() < deadline, "the large request was never counted in flight"
        time.sleep(0.02)
    shed = web.post(f"{url}/v1/traces", content=span_body("shed"), headers=headers)
    assert shed.status_code == 503
    assert shed.headers["retry-after"] == "1"
    assert rpc_status(shed).code == 14  # UNAVAILABLE

    # The SDK's exporter meets a 503, waits Retry-After and tries again.
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    provider.get_tracer("t").start_span("retried").end()
    exporter = OTLPSpanExporter(endpoint=f"{url}/v1/traces", headers={"x-api-key": key})
    started = time.monotonic()
    result = exporter.export(memory.get_finished_spans())
    # The SDK gives up after six tries, Retry-After 1 s apart; on a loaded machine the
    # large request can hold the slot longer than that (over 5 s beside three other test
    # processes). Its spans were refused each time, not stored, so an application exports
    # them again: the slot must free once the large request ends.
    while result is SpanExportResult.FAILURE and holder.is_alive():
        result = exporter.export(memory.get_finished_spans())
    assert result is SpanExportResult.SUCCESS
    assert time.monotonic() - started >= 1.0  # it had to wait at least once
    exporter.shutdown()
    holder.join()
    assert answers[0].status_code == 200
