"""OTLP bodies: protobuf and OTLP JSON in, responses and errors out, paths."""

from __future__ import annotations

import base64

import orjson
import pytest
from google.protobuf import json_format
from google.rpc.status_pb2 import Status as RpcStatus
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from limelight.errors import BadRequest
from limelight.ingest.otlp.codec import (
    MAX_JSON_DEPTH,
    Encoding,
    decode_request,
    encode_message,
    encode_status,
    encoding_of,
    export_response,
)
from limelight.ingest.otlp.signals import LOGS, METRICS, TRACES, Signal, signal_for_path
from tests.unit.ingest.otlp_builders import PARENT_ID, SPAN_ID, TRACE_ID, span, traces

# The OTLP specification's own JSON example shape: hex ids, enums as numbers,
# 64-bit integers as strings, lowerCamelCase names.
OTLP_JSON = {
    "resourceSpans": [
        {
            "resource": {
                "attributes": [{"key": "service.name", "value": {"stringValue": "my.service"}}]
            },
            "scopeSpans": [
                {
                    "scope": {"name": "my.library", "version": "1.0.0"},
                    "spans": [
                        {
                            "traceId": TRACE_ID.hex().upper(),
                            "spanId": SPAN_ID.hex(),
                            "parentSpanId": PARENT_ID.hex(),
                            "name": "I'm a server span",
                            "startTimeUnixNano": "1544712660000000000",
                            "endTimeUnixNano": 1544712661000000000,
                            "kind": 2,
                            "attributes": [
                                {"key": "my.span.attr", "value": {"intValue": "42"}},
                                {"key": "ok", "value": {"boolValue": True}},
                            ],
                            "links": [{"traceId": TRACE_ID.hex(), "spanId": PARENT_ID.hex()}],
                            "status": {"code": "STATUS_CODE_ERROR", "message": "x"},
                        }
                    ],
                }
            ],
        }
    ]
}


def test_otlp_json_with_hex_ids_decodes_like_protobuf() -> None:
    request = decode_request(TRACES, orjson.dumps(OTLP_JSON), Encoding.JSON)
    [s] = request.resource_spans[0].scope_spans[0].spans
    assert s.trace_id == TRACE_ID
    assert s.span_id == SPAN_ID
    assert s.parent_span_id == PARENT_ID
    assert s.links[0].span_id == PARENT_ID
    assert s.kind == 2
    assert s.start_time_unix_nano == 1544712660000000000
    assert s.end_time_unix_nano == 1544712661000000000
    assert s.attributes[0].value.int_value == 42
    assert s.status.code == 2


def test_json_accepts_snake_case_and_unknown_fields() -> None:
    doc = {
        "resource_logs": [
            {
                "scope_logs": [
                    {
                        "log_records": [
                            {
                                "trace_id": TRACE_ID.hex(),
                                "severity_number": "SEVERITY_NUMBER_WARN",
                                "body": {"stringValue": "hi"},
                                "somethingNew": {"x": 1},
                            }
                        ]
                    }
                ]
            }
        ]
    }
    request = decode_request(LOGS, orjson.dumps(doc), Encoding.JSON)
    record = request.resource_logs[0].scope_logs[0].log_records[0]
    assert record.trace_id == TRACE_ID
    assert record.severity_number == 13
    assert record.body.string_value == "hi"


def test_base64_ids_from_older_clients_still_decode() -> None:
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "", "spanId": ""}]}]}]}
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] = base64.b64encode(
        TRACE_ID
    ).decode()
    request = decode_request(TRACES, orjson.dumps(doc), Encoding.JSON)
    assert request.resource_spans[0].scope_spans[0].spans[0].trace_id == TRACE_ID


def test_protobuf_body_decodes() -> None:
    body = traces([span("x")]).SerializeToString()
    request = decode_request(TRACES, body, Encoding.PROTOBUF)
    assert request.resource_spans[0].scope_spans[0].spans[0].name == "x"


def test_an_empty_protobuf_body_is_an_empty_request() -> None:
    assert len(decode_request(TRACES, b"", Encoding.PROTOBUF).resource_spans) == 0


@pytest.mark.parametrize(
    ("body", "encoding"),
    [
        (b"\xff\xff\xff", Encoding.PROTOBUF),
        (b"not json", Encoding.JSON),
        (b"[1, 2]", Encoding.JSON),
        (b'{"resourceSpans": 5}', Encoding.JSON),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 5}]}]}]}', Encoding.JSON),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"endTimeUnixNano": "soon"}]}]}]}',
            Encoding.JSON,
        ),
    ],
)
def test_undecodable_bodies_are_bad_requests(body: bytes, encoding: Encoding) -> None:
    with pytest.raises(BadRequest):
        decode_request(TRACES, body, encoding)


def _nested_json(levels: int) -> bytes:
    return b"[" * levels + b'{"traceId": "5b8efff798038103d269b633813fc60c"}' + b"]" * levels


def _under_unknown_field(levels: int) -> bytes:
    """A traces body ``levels`` deep in all: an ignored field holds the nesting."""
    head = b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "a", "x": '
    return head + _nested_json(levels - 8) + b"}]}]}]}"


def test_json_up_to_the_depth_limit_decodes() -> None:
    request = decode_request(TRACES, _under_unknown_field(MAX_JSON_DEPTH), Encoding.JSON)
    assert [s.name for s in request.resource_spans[0].scope_spans[0].spans] == ["a"]


def test_the_deepest_message_json_format_reads_is_within_the_limit() -> None:
    value: dict[str, object] = {"stringValue": "x"}
    for _ in range(47):  # 100 nested messages, json_format's bound: 148 levels of JSON
        value = {"arrayValue": {"values": [value]}}
    attribute = {"key": "deep", "value": value}
    body = orjson.dumps({"resourceSpans": [{"resource": {"attributes": [attribute]}}]})
    request = decode_request(TRACES, body, Encoding.JSON)
    assert request.resource_spans[0].resource.attributes[0].key == "deep"


def _brackets(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


@pytest.mark.parametrize("signal", [TRACES, LOGS, METRICS])
@pytest.mark.parametrize(
    "body",
    [
        # A known field: json_format's error message held the value, and its repr
        # passed Python's recursion limit (a 500).
        b'{"resourceSpans": ' + _brackets(1001) + b"}",
        b'{"resourceLogs": ' + _brackets(1010) + b"}",
        b'{"resourceMetrics": [{"scopeMetrics": ' + _brackets(1020) + b"}]}",
        b'{"resourceSpans": ' + _brackets(MAX_JSON_DEPTH) + b"}",
        # Ignored fields count too.
        _under_unknown_field(MAX_JSON_DEPTH + 1),
        _under_unknown_field(1010),
        b'{"x": ' + _brackets(1023) + b"}",
    ],
    ids=["1001", "1010", "1020", "limit+1", "unknown-limit+1", "unknown-1010", "unknown-1024"],
)
def test_json_nested_deeper_than_the_limit_is_a_bad_request(signal: Signal, body: bytes) -> None:
    with pytest.raises(BadRequest) as caught:
        decode_request(signal, body, Encoding.JSON)
    assert (
        caught.value.reason
        == f"the body nests objects and arrays more than {MAX_JSON_DEPTH} levels deep"
    )


def test_json_deeper_than_the_parser_reads_is_not_json() -> None:
    with pytest.raises(BadRequest, match="not valid JSON"):
        decode_request(TRACES, b'{"resourceSpans": ' + _brackets(1024) + b"}", Encoding.JSON)


@pytest.mark.parametrize("levels", [40, 1010])
def test_json_nested_too_deep_in_known_fields_is_a_bad_request(levels: int) -> None:
    value = b'{"stringValue": "x"}'
    for _ in range(levels):
        value = b'{"kvlistValue": {"values": [{"key": "k", "value": ' + value + b"}]}}"
    body = b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": [{"key": "d", "value": '
    body += value + b"}]}]}]}]}"
    with pytest.raises(BadRequest):
        decode_request(TRACES, body, Encoding.JSON)


def test_full_success_responses_are_empty_messages() -> None:
    response = export_response(TRACES, 0, "")
    assert encode_message(response, Encoding.PROTOBUF) == b""
    assert orjson.loads(encode_message(response, Encoding.JSON)) == {}


def test_partial_success_response_in_both_encodings() -> None:
    response = export_response(LOGS, 3, "3 log records rejected")
    decoded = ExportLogsServiceResponse.FromString(encode_message(response, Encoding.PROTOBUF))
    assert decoded.partial_success.rejected_log_records == 3
    assert decoded.partial_success.error_message == "3 log records rejected"
    as_json = orjson.loads(encode_message(response, Encoding.JSON))
    parsed = json_format.ParseDict(as_json, ExportLogsServiceResponse())
    assert parsed.partial_success.rejected_log_records == 3
    trace_response = export_response(TRACES, 1, "m")
    assert (
        ExportTraceServiceResponse.FromString(
            encode_message(trace_response, Encoding.PROTOBUF)
        ).partial_success.rejected_spans
        == 1
    )


@pytest.mark.parametrize("message", ["", "bad body", "é" * 200])
def test_status_encoding_is_a_google_rpc_status(message: str) -> None:
    status = RpcStatus.FromString(encode_status(3, message))
    assert (status.code, status.message) == (3, message)
    assert RpcStatus.FromString(encode_status(300, "x")).code == 300


@pytest.mark.parametrize(
    ("path", "signal"),
    [
        ("v1/traces", TRACES),
        ("/v1/logs", LOGS),
        ("v1/metrics/", METRICS),
        ("v1", TRACES),
        ("v1/", TRACES),
        ("v1/v1/traces", TRACES),
        ("v1/v1/metrics", METRICS),
        ("v1/v1", TRACES),
        ("v2/traces", None),
        ("v1/spans", None),
        ("", None),
        ("v1/traces/extra", None),
    ],
)
def test_paths(path: str, signal: object) -> None:
    assert signal_for_path(path) is signal


@pytest.mark.parametrize(
    ("header", "encoding"),
    [
        ("application/x-protobuf", Encoding.PROTOBUF),
        ("application/protobuf", Encoding.PROTOBUF),
        ("Application/JSON; charset=utf-8", Encoding.JSON),
        ("text/plain", None),
        (None, None),
        ("", None),
    ],
)
def test_content_types(header: str | None, encoding: Encoding | None) -> None:
    assert encoding_of(header) is encoding


def _one_span(**fields: object) -> bytes:
    span_doc = {"traceId": TRACE_ID.hex(), "spanId": SPAN_ID.hex(), "name": "a", **fields}
    return orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span_doc]}]}]})


@pytest.mark.parametrize("trace_id", [12345, 1.5, True])
def test_an_id_that_is_not_a_string_is_an_invalid_id_of_its_item(trace_id: object) -> None:
    """Not the whole body's 400 with the parser's own words ("object of type 'int' has
    no len()"): the span gets an id no item accepts, and is rejected naming the rule."""
    request = decode_request(TRACES, _one_span(traceId=trace_id), Encoding.JSON)
    assert request.resource_spans[0].scope_spans[0].spans[0].trace_id == b"\0"


@pytest.mark.parametrize("value", ["!!!!", "a", "abc$", 5])
def test_a_bytes_value_that_is_not_base64_is_a_bad_request(value: object) -> None:
    attributes = [{"key": "k", "value": {"bytesValue": value}}]
    with pytest.raises(BadRequest, match="bytesValue is not base64"):
        decode_request(TRACES, _one_span(attributes=attributes), Encoding.JSON)


@pytest.mark.parametrize(("value", "shown"), [(["QQ=="], "an array"), ({}, "an object")])
def test_a_bytes_value_that_is_a_container_is_named_for_its_kind(value: object, shown: str) -> None:
    attributes = [{"key": "k", "value": {"bytesValue": value}}]
    with pytest.raises(BadRequest) as refused:
        decode_request(TRACES, _one_span(attributes=attributes), Encoding.JSON)
    assert refused.value.reason == f"an attribute's bytesValue is not base64: {shown}"


def test_a_null_bytes_value_is_no_value_as_before() -> None:
    attributes = [{"key": "k", "value": {"bytesValue": None}}]
    request = decode_request(TRACES, _one_span(attributes=attributes), Encoding.JSON)
    assert request.resource_spans[0].scope_spans[0].spans[0].attributes[0].key == "k"


def test_a_bytes_value_in_either_base64_alphabet_decodes() -> None:
    attributes = [
        {"key": "k", "value": {"bytesValue": "+/8="}},
        {"key": "u", "value": {"bytes_value": "-_8"}},
    ]
    request = decode_request(TRACES, _one_span(attributes=attributes), Encoding.JSON)
    values = request.resource_spans[0].scope_spans[0].spans[0].attributes
    assert [v.value.bytes_value for v in values] == [b"\xfb\xff", b"\xfb\xff"]
