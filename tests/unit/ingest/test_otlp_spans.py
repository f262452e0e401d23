"""Spans become events: names, ids in hex, durations in ms, nested attributes, status."""

from __future__ import annotations

from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from limelight.ingest.otlp.codec import ID_RULES, Encoding
from limelight.ingest.otlp.common import Rejections
from limelight.ingest.otlp.spans import map_spans
from tests.unit.ingest.otlp_builders import PARENT_ID, SPAN_ID, T0, TRACE_ID, span, traces


def one_event(s: Span, resource: dict[str, object] | None = None) -> dict[str, object]:
    groups = map_spans(traces([s], resource), Rejections())
    assert len(groups) == 1 and len(groups[0].events) == 1
    return groups[0].events[0]


def test_core_fields_of_a_server_span() -> None:
    s = span("GET /users", kind=Span.SPAN_KIND_SERVER, parent_span_id=PARENT_ID)
    event = one_event(s)
    assert event["name"] == "GET /users"
    assert event["traceId"] == TRACE_ID.hex()
    assert event["spanId"] == SPAN_ID.hex()
    assert event["parentSpanId"] == PARENT_ID.hex()
    assert event["kind"] == "SERVER"
    assert event["timestamp"] == T0
    assert event["duration"] == 12.5
    assert event["status"] == {"code": "UNSET"}
    assert "error" not in event
    assert event["scope"] == {"name": "tests"}


def test_a_root_span_has_no_parent_key() -> None:
    assert "parentSpanId" not in one_event(span())


def test_dotted_attributes_become_nested_keys() -> None:
    attrs = {"http.method": "GET", "http.status_code": 200, "http.route": "/u", "retry": True}
    event = one_event(span(attributes=attrs))
    assert event["attributes"] == {
        "http": {"method": "GET", "status_code": 200, "route": "/u"},
        "retry": True,
    }


def test_colliding_attribute_keys_are_kept_flat_without_loss() -> None:
    event = one_event(span(attributes={"db": "pg", "db.statement": "SELECT 1"}))
    assert event["attributes"] == {"db": "pg", "db.statement": "SELECT 1"}


def test_a_dotted_key_inside_a_map_value_is_a_collision_too() -> None:
    # Nested, "a.b" silently replaced the map's own "b".
    event = one_event(span(attributes={"a": {"b": 1, "c": 3}, "a.b": 2}))
    assert event["attributes"] == {"a": {"b": 1, "c": 3}, "a.b": 2}


def test_attribute_value_types() -> None:
    attrs = {"ratio": 0.25, "tags": ["a", "b"], "blob": b"\x00\x01", "obj": {"k.x": 1}}
    event = one_event(span(attributes=attrs))
    assert event["attributes"] == {
        "ratio": 0.25,
        "tags": ["a", "b"],
        "blob": "AAE=",
        "obj": {"k.x": 1},
    }


def test_resource_attributes_and_service_names() -> None:
    resource = {"service.name": "checkout", "service.namespace": "shop", "host.name": "h1"}
    groups = map_spans(traces([span()], resource), Rejections())
    group = groups[0]
    assert (group.service, group.namespace) == ("checkout", "shop")
    assert group.events[0]["resource"] == {
        "service": {"name": "checkout", "namespace": "shop"},
        "host": {"name": "h1"},
    }


def test_namespace_falls_back_to_the_service_name() -> None:
    group = map_spans(traces([span()], {"service.name": "checkout"}), Rejections())[0]
    assert (group.service, group.namespace) == ("checkout", "checkout")


def test_no_service_name_leaves_the_defaults_to_enrichment() -> None:
    group = map_spans(traces([span()]), Rejections())[0]
    assert (group.service, group.namespace) == (None, None)


def test_error_status_sets_error_to_its_message() -> None:
    s = span(status=Status(code=Status.STATUS_CODE_ERROR, message="db timeout"))
    event = one_event(s)
    assert event["status"] == {"code": "ERROR", "message": "db timeout"}
    assert event["error"] == "db timeout"


def test_error_without_message_takes_the_recorded_exception() -> None:
    s = span(status=Status(code=Status.STATUS_CODE_ERROR))
    exc = s.events.add(name="exception", time_unix_nano=T0 + 5)
    exc.attributes.add(key="exception.message").value.string_value = "boom"
    assert one_event(s)["error"] == "boom"
    bare = span(status=Status(code=Status.STATUS_CODE_ERROR))
    assert one_event(bare)["error"] == "ERROR"


def test_ok_status_is_not_an_error() -> None:
    event = one_event(span(status=Status(code=Status.STATUS_CODE_OK)))
    assert event["status"] == {"code": "OK"}
    assert "error" not in event


def test_span_events_and_links() -> None:
    s = span()
    e = s.events.add(name="cache.miss", time_unix_nano=T0 + 1000)
    e.attributes.add(key="cache.key").value.string_value = "user:1"
    link = s.links.add(trace_id=bytes(range(16)), span_id=bytes(range(8)), trace_state="a=b")
    link.attributes.add(key="link.kind").value.string_value = "follows"
    event = one_event(s)
    assert event["events"] == [
        {"name": "cache.miss", "timestamp": T0 + 1000, "attributes": {"cache": {"key": "user:1"}}}
    ]
    assert event["links"] == [
        {
            "traceId": bytes(range(16)).hex(),
            "spanId": bytes(range(8)).hex(),
            "traceState": "a=b",
            "attributes": {"link": {"kind": "follows"}},
        }
    ]


def test_unknown_kind_numbers_are_kept() -> None:
    assert one_event(span(kind=9))["kind"] == "9"


def test_spans_with_invalid_ids_are_rejected_and_counted() -> None:
    good = span()
    zero_trace = span(trace_id=bytes(16))
    short_span = span(span_id=b"\x01\x02")
    bad_parent = span(parent_span_id=b"\x01")
    rejections = Rejections(ID_RULES[Encoding.PROTOBUF])
    groups = map_spans(traces([good, zero_trace, short_span, bad_parent]), rejections)
    assert len(groups[0].events) == 1
    assert rejections.count == 3
    assert rejections.message() == (
        "3 spans with an invalid trace or span id (OTLP protobuf writes ids as bytes:"
        " a trace_id of 16, a span_id of 8; an id of all zeros is none)"
    )


def test_unfinished_span_has_no_duration() -> None:
    assert "duration" not in one_event(span(end=0))
