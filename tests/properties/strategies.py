"""Hypothesis strategies for what clients send: event bodies, OTLP requests, query specs.

They aim at the edges the code must survive: keys with dots, braces, backquotes
and backslashes, integers beyond 64 bits, times in every odd spelling, nesting
far deeper than any parser reads, and bytes that are almost JSON.
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.metrics.v1.metrics_pb2 import Metric
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from limelight.query.calculations import CALCULATIONS
from limelight.query.keys import valid_key
from limelight.query.operators import OPERATORS, split_list
from limelight.query.spec import MAX_LIMIT
from limelight.times import DAY_MS

# ---------------------------------------------------------------- JSON values

ODD_KEYS = [
    "", ".", "..", "a.b", "a..b", ".a", "a.", "a{b", "a{{b", "a}b", "{p0:String}", "`",
    "we`ird\\key", "\\", "\x00", "\t", "ключ", "timestamp", "_timestamp", "@timestamp", "time",
    "service", "namespace", "password", "x-api-key", "Authorization", "token", "_id",
    "data", "data.userId", "error", "error.message", "__table1", "a" + ".a" * 40,
]  # fmt: skip
keys = st.one_of(
    st.sampled_from(ODD_KEYS),
    st.text(max_size=10),
    st.integers(0, 300).map(lambda n: "a" + ".a" * n),
)
ODD_TIMES = [
    "\u00b2", "\u00b3", "\u2460", "\u0661\u0667", "-", ".", "-.5", "1e3", "0x10", " 12 ",
    "2024-05-01", "2024-05-01T10:00:00Z", "2024-05-01T10:00:00+25:00", "0001-01-01",
    "9999-12-31T23:59:59-23:59", "1700000000", "1700000000000", "1700000000000000000",
    "2000-06-01T00:00:00Z", "946684800000",
    "9" * 30, "nan", "inf", "", "\ud7ff",
]  # fmt: skip
times = st.one_of(
    st.sampled_from(ODD_TIMES),
    st.integers(),
    st.integers(946_684_800_000, 999_999_999_999),  # 2000-01-01 to 2001-09-09, in ms
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet="0123456789.-+eE:TZ \u00b2\u2460", max_size=25),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),  # unbounded: beyond 64 bits too
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    times,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=24,
)
events = st.dictionaries(
    st.one_of(keys, st.sampled_from(["timestamp", "_timestamp", "time", "service"])),
    json_values,
    max_size=6,
)


def _nested_text(depth: int, opener: str) -> str:
    if opener == "{":
        return '{"k":' * depth + "1" + "}" * depth
    return "[" * depth + "]" * depth


deep_texts = st.builds(
    _nested_text,
    st.one_of(st.integers(100, 300), st.integers(1000, 1100), st.integers(1, 5000)),
    st.sampled_from(["{", "["]),
).map(lambda text: text if text.startswith("{") else '{"k":' + text + "}")


@st.composite
def element_texts(draw: st.DrawFn) -> str:
    """One element of a batch as JSON text: an event, another value, or very deep nesting."""
    kind = draw(st.sampled_from(["event", "event", "event", "value", "deep", "twice"]))
    if kind == "deep":
        return draw(deep_texts)
    if kind == "twice":  # one path named both ways: {"x.y": .., "x": {"y": ..}}
        first, second = draw(json_values), draw(json_values)
        pair = [("x.y", first), ("x", {"y": second})]
        return json.dumps(dict(pair if draw(st.booleans()) else pair[::-1]))
    value = draw(events if kind == "event" else json_values)
    return json.dumps(value, ensure_ascii=draw(st.booleans()))


@st.composite
def event_bodies(draw: st.DrawFn) -> bytes:
    """An Events API body: usually a JSON array of elements, sometimes spoilt."""
    if draw(st.integers(0, 19)) == 0:  # a backfill: one event a day over months
        start = draw(st.integers(946_684_800_000, 1_700_000_000_000))
        days = draw(st.integers(1, 150))
        return json.dumps([{"timestamp": start + i * DAY_MS, "i": i} for i in range(days)]).encode()
    elements = draw(st.lists(element_texts(), max_size=6))
    body = ("[" + ",".join(elements) + "]").encode()
    spoil = draw(st.sampled_from(["none", "none", "none", "cut", "insert", "bytes", "replace"]))
    if spoil == "cut" and body:
        body = body[: draw(st.integers(0, len(body) - 1))]
    elif spoil == "insert":
        at = draw(st.integers(0, len(body)))
        junk = draw(st.sampled_from([b",", b"]", b"[", b"{", b'"', b"\\", b"\xff", b"NaN", b" "]))
        body = body[:at] + junk + body[at:]
    elif spoil == "bytes":
        body = draw(st.binary(max_size=40))
    elif spoil == "replace":
        body = draw(st.sampled_from([b"", b"[]", b"{}", b"null", b"[[]", b"[1,]", b"\t[\x0c]"]))
    return body


# ---------------------------------------------------------------- OTLP

any_values = st.deferred(
    lambda: st.one_of(
        st.text(max_size=10).map(lambda v: AnyValue(string_value=v)),
        st.integers(-(2**63), 2**63 - 1).map(lambda v: AnyValue(int_value=v)),
        st.floats().map(lambda v: AnyValue(double_value=v)),  # NaN and infinities too
        st.booleans().map(lambda v: AnyValue(bool_value=v)),
        st.binary(max_size=8).map(lambda v: AnyValue(bytes_value=v)),
        st.just(AnyValue()),
        st.lists(any_values, max_size=3).map(_array_value),
        st.lists(key_values, max_size=3).map(_kvlist_value),
    )
)
key_values = st.builds(lambda k, v: KeyValue(key=k, value=v), keys, any_values)


def _array_value(values: list[AnyValue]) -> AnyValue:
    out = AnyValue()
    out.array_value.values.extend(values)
    return out


def _kvlist_value(values: list[KeyValue]) -> AnyValue:
    out = AnyValue()
    out.kvlist_value.values.extend(values)
    return out


def _nested_value(levels: int) -> AnyValue:
    value = AnyValue(string_value="leaf")
    for _ in range(levels):
        value = _kvlist_value([KeyValue(key="k", value=value)])
    return value


attribute_lists = st.lists(
    st.one_of(
        key_values, st.integers(0, 30).map(lambda n: KeyValue(key="n", value=_nested_value(n)))
    ),
    max_size=4,
)
# Mostly valid ids, so that most items reach the mapping; sometimes any bytes.
trace_ids = st.one_of(
    st.binary(min_size=16, max_size=16).filter(any), st.binary(max_size=17), st.just(bytes(16))
)
span_ids = st.one_of(
    st.binary(min_size=8, max_size=8).filter(any), st.binary(max_size=9), st.just(b"")
)
nanos = st.one_of(
    st.integers(0, 2**64 - 1),
    st.just(1_700_000_000_000_000_000),
    st.integers(946_684_800, 999_999_999_999_999_999),  # around 2000, in any unit
)


@st.composite
def spans(draw: st.DrawFn) -> Span:
    span = Span(
        name=draw(st.text(max_size=8)),
        trace_id=draw(trace_ids),
        span_id=draw(span_ids),
        parent_span_id=draw(span_ids),
        start_time_unix_nano=draw(nanos),
        end_time_unix_nano=draw(nanos),
        kind=draw(st.integers(0, 7)),
    )
    span.attributes.extend(draw(attribute_lists))
    span.status.code = draw(st.integers(0, 3))
    span.status.message = draw(st.text(max_size=5))
    for _ in range(draw(st.integers(0, 2))):
        event = span.events.add(name=draw(st.text(max_size=4)), time_unix_nano=draw(nanos))
        event.attributes.extend(draw(attribute_lists))
        link = span.links.add(trace_id=draw(trace_ids), span_id=draw(span_ids))
        link.attributes.extend(draw(attribute_lists))
    return span


@st.composite
def log_records(draw: st.DrawFn) -> LogRecord:
    record = LogRecord(
        time_unix_nano=draw(nanos),
        observed_time_unix_nano=draw(nanos),
        severity_number=draw(st.integers(0, 30)),
        severity_text=draw(st.text(max_size=5)),
        trace_id=draw(trace_ids),
        span_id=draw(span_ids),
        event_name=draw(st.text(max_size=5)),
    )
    if draw(st.booleans()):
        record.body.CopyFrom(draw(any_values))
    record.attributes.extend(draw(attribute_lists))
    return record


@st.composite
def metrics(draw: st.DrawFn) -> Metric:
    metric = Metric(name=draw(st.text(max_size=6)), unit=draw(st.text(max_size=3)))
    kind = draw(st.sampled_from(["gauge", "sum", "histogram", "exponential_histogram", "summary"]))
    data = getattr(metric, kind)
    if kind in ("sum", "histogram", "exponential_histogram"):
        data.aggregation_temporality = draw(st.integers(0, 5))
    for _ in range(draw(st.integers(0, 2))):
        point = data.data_points.add(time_unix_nano=draw(nanos))
        point.attributes.extend(draw(attribute_lists))
        floats = st.floats()
        if kind in ("gauge", "sum"):
            if draw(st.booleans()):
                point.as_double = draw(floats)
            else:
                point.as_int = draw(st.integers(-(2**63), 2**63 - 1))
        elif kind == "histogram":
            point.count = draw(st.integers(0, 2**64 - 1))
            point.explicit_bounds.extend(draw(st.lists(floats, max_size=3)))
            point.bucket_counts.extend(draw(st.lists(st.integers(0, 2**64 - 1), max_size=4)))
            point.sum = draw(floats)
        elif kind == "exponential_histogram":
            point.scale = draw(st.integers(-(2**31), 2**31 - 1))
            point.zero_threshold = draw(floats)
            point.positive.offset = draw(st.integers(-(2**31), 2**31 - 1))
            point.positive.bucket_counts.extend(draw(st.lists(st.integers(0, 9), max_size=3)))
        else:
            point.sum = draw(floats)
            point.quantile_values.add(quantile=draw(floats), value=draw(floats))
    return metric


def _resource_request(request: Any, resources: Any, attrs: list[KeyValue]) -> Any:
    entry = resources.add()
    entry.resource.attributes.extend(attrs)
    return entry


@st.composite
def otlp_requests(draw: st.DrawFn) -> tuple[str, Any]:
    """(signal name, Export*ServiceRequest) with one resource and one scope."""
    signal = draw(st.sampled_from(["traces", "logs", "metrics"]))
    resource = draw(attribute_lists)
    scope_attrs = draw(attribute_lists)
    if signal == "traces":
        request: Any = ExportTraceServiceRequest()
        scoped = _resource_request(request, request.resource_spans, resource).scope_spans.add()
        scoped.spans.extend(draw(st.lists(spans(), max_size=3)))
    elif signal == "logs":
        request = ExportLogsServiceRequest()
        scoped = _resource_request(request, request.resource_logs, resource).scope_logs.add()
        scoped.log_records.extend(draw(st.lists(log_records(), max_size=3)))
    else:
        request = ExportMetricsServiceRequest()
        scoped = _resource_request(request, request.resource_metrics, resource).scope_metrics.add()
        scoped.metrics.extend(draw(st.lists(metrics(), max_size=3)))
    scoped.scope.name = draw(st.text(max_size=4))
    scoped.scope.attributes.extend(scope_attrs)
    return signal, request


@st.composite
def otlp_protobuf_bodies(draw: st.DrawFn) -> tuple[str, bytes]:
    signal, request = draw(otlp_requests())
    body: bytes = request.SerializeToString()
    spoil = draw(st.sampled_from(["none", "none", "cut", "flip", "bytes"]))
    if spoil == "cut" and body:
        body = body[: draw(st.integers(0, len(body) - 1))]
    elif spoil == "flip" and body:
        at = draw(st.integers(0, len(body) - 1))
        body = body[:at] + bytes([draw(st.integers(0, 255))]) + body[at + 1 :]
    elif spoil == "bytes":
        body = draw(st.binary(max_size=60))
    return signal, body


OTLP_NAMES = [
    "resourceSpans", "resourceLogs", "resourceMetrics", "scopeSpans", "scopeLogs",
    "scopeMetrics", "spans", "logRecords", "metrics", "resource", "scope", "attributes",
    "key", "value", "stringValue", "intValue", "doubleValue", "boolValue", "bytesValue",
    "arrayValue", "kvlistValue", "values", "traceId", "spanId", "parentSpanId", "name",
    "startTimeUnixNano", "endTimeUnixNano", "timeUnixNano", "kind", "status", "code", "body",
    "gauge", "sum", "histogram", "dataPoints", "asInt", "asDouble", "bucketCounts",
]  # fmt: skip
otlp_shaped = st.recursive(
    st.one_of(scalars, st.sampled_from(["5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"])),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(OTLP_NAMES) | keys, inner, max_size=4)
    ),
    max_leaves=30,
)


@st.composite
def otlp_json_bodies(draw: st.DrawFn) -> tuple[str, bytes]:
    """OTLP JSON: a valid request as the JSON mapping writes it, or something shaped like one."""
    kind = draw(st.sampled_from(["valid", "shaped", "deep"]))
    if kind == "valid":
        signal, request = draw(otlp_requests())
        doc: Any = json_format.MessageToDict(request)
        return signal, json.dumps(doc).encode()
    signal = draw(st.sampled_from(["traces", "logs", "metrics"]))
    if kind == "deep":
        depth = draw(st.integers(50, 1100))
        return signal, b'{"resourceSpans": [{"x": ' + b"[" * depth + b"]" * depth + b"}]}"
    doc = draw(st.dictionaries(st.sampled_from(OTLP_NAMES), otlp_shaped, max_size=3))
    return signal, json.dumps(doc).encode()


# ---------------------------------------------------------------- query specs

query_keys = st.one_of(
    st.sampled_from(
        [
            "duration",
            "status",
            "tags",
            "message",
            "data",
            "data.userId",
            "data.depth",
            "http.method",
            "_service",
            "_timestamp",
            "_dataset",
            "_id",
            "a{b",
            "a{{b",
            "a}b",
            "we`ird\\key.sp ace",
            "nowhere",
            "__table1",
            "",
            "a..b",
            "error",
        ]
    ),  # fmt: skip
    st.text(max_size=8),
)
patterns = st.one_of(
    st.sampled_from(
        ["\\", "a\\", "%\\", "\\\\", "%", "_", "(unclosed", "[a-", "a{1,2", "(?i)x", ".*"]
    ),
    st.text(max_size=8),
)
filter_values = st.one_of(
    scalars,
    patterns,
    st.lists(scalars, max_size=3),
    st.fixed_dictionaries(
        {"key": query_keys},
        optional={"type": st.sampled_from(["string", "number", "boolean", "other"])},
    ),
    json_values,
)
operations = st.one_of(st.sampled_from(sorted(OPERATORS)), st.text(max_size=6))
operators = st.one_of(st.sampled_from(sorted(CALCULATIONS)), st.text(max_size=6))


@st.composite
def query_specs(draw: st.DrawFn) -> dict[str, Any]:
    """A query body: mostly well-formed, sometimes not, never shy of odd keys and values."""
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["filters"] = draw(
            st.lists(
                st.fixed_dictionaries(
                    {"key": query_keys, "operation": operations}, optional={"value": filter_values}
                ),
                max_size=3,
            )
        )
    if draw(st.booleans()):
        spec["calculations"] = draw(
            st.lists(
                st.fixed_dictionaries(
                    {"operator": operators},
                    optional={"key": query_keys, "alias": st.text(max_size=6)},
                ),
                max_size=3,
            )
        )
    if draw(st.booleans()):
        spec["group_bys"] = draw(st.lists(st.fixed_dictionaries({"key": query_keys}), max_size=2))
    if draw(st.booleans()):
        named = [g["key"] for g in spec.get("group_bys", [])] + [
            c.get("alias") or f"{c['operator']}({c['key']})" if c.get("key") else c["operator"]
            for c in spec.get("calculations", [])
        ]
        order_keys = st.sampled_from(named) if named else query_keys
        spec["orders"] = draw(
            st.lists(
                st.fixed_dictionaries(
                    {"key": order_keys},
                    optional={"order": st.sampled_from(["ASCENDING", "DESCENDING", "UP"])},
                ),
                max_size=2,
            )
        )
    if draw(st.booleans()):
        spec["needle"] = draw(
            st.fixed_dictionaries(
                {"value": patterns}, optional={"isRegex": st.booleans(), "matchCase": st.booleans()}
            )
        )
    if draw(st.integers(0, 4)) == 0:
        spec["keys"] = draw(st.lists(st.fixed_dictionaries({"key": query_keys}), max_size=2))
    if draw(st.integers(0, 4)) == 0:
        spec["namespaces"] = draw(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "type": st.sampled_from(["dataset", "service", "namespace", "lambda"]),
                        "value": st.text(max_size=6),
                    }
                ),
                max_size=2,
            )
        )
    if draw(st.integers(0, 4)) == 0:
        spec["filter_combination"] = draw(st.sampled_from(["AND", "OR", "XOR"]))
    if draw(st.integers(0, 4)) == 0:
        spec["limit"] = draw(st.integers(-5, 20_000))
    if draw(st.integers(0, 9)) == 0:
        spec[draw(st.text(max_size=5))] = draw(json_values)
    return spec


valid_query_keys = query_keys.filter(lambda key: valid_key(key) is None)
LITERALS: dict[str, st.SearchStrategy[Any]] = {
    "string": st.one_of(patterns, st.sampled_from(["api", "GET", "u1", "req-00", "boom"])),
    "number": st.one_of(
        st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False, allow_infinity=False)
    ),
    "boolean": st.booleans(),
}


@st.composite
def well_formed_filters(draw: st.DrawFn) -> dict[str, Any]:
    """A filter its operation accepts: the engine, not validation, is what it meets."""
    name = draw(st.sampled_from(sorted(OPERATORS)))
    op = OPERATORS[name]
    flt: dict[str, Any] = {"key": draw(valid_query_keys), "operation": name}
    if op.shape == "list":
        flt["value"] = draw(
            st.one_of(
                st.lists(st.one_of(*LITERALS.values()), min_size=1, max_size=3),
                st.text(alphabet="ab12, .-", min_size=1, max_size=8).filter(split_list),
            )
        )
    elif op.shape == "one":
        kind = draw(st.sampled_from(sorted(op.kinds)))
        ref = st.fixed_dictionaries({"key": valid_query_keys, "type": st.just(kind)})
        flt["value"] = draw(st.one_of(LITERALS[kind], ref))
    return flt


@st.composite
def well_formed_specs(draw: st.DrawFn) -> dict[str, Any]:
    """A query validation accepts, built from every operator, calculation and feature."""
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["filters"] = draw(st.lists(well_formed_filters(), max_size=3))
        spec["filter_combination"] = draw(st.sampled_from(["AND", "OR"]))
    names: list[str] = []
    if draw(st.booleans()):
        calcs = []
        for name in draw(st.lists(st.sampled_from(sorted(CALCULATIONS)), max_size=3)):
            calc: dict[str, Any] = {"operator": name, "alias": f"v{len(calcs)}"}
            if CALCULATIONS[name].needs_key or draw(st.booleans()):
                calc["key"] = draw(valid_query_keys)
            calcs.append(calc)
            names.append(calc["alias"])
        spec["calculations"] = calcs
    if draw(st.booleans()):
        groups = draw(st.lists(valid_query_keys, max_size=2, unique=True))
        spec["group_bys"] = [{"key": key} for key in groups]
        names += groups
    if names and draw(st.booleans()):
        order = st.sampled_from(["ASCENDING", "DESCENDING"])
        spec["orders"] = [{"key": draw(st.sampled_from(names)), "order": draw(order)}]
    if not spec.get("calculations") and draw(st.integers(0, 3)) == 0:
        spec["keys"] = [{"key": key} for key in draw(st.lists(valid_query_keys, max_size=2))]
    if draw(st.integers(0, 3)) == 0:
        needle = draw(patterns.filter(bool))
        spec["needle"] = {"value": needle, "isRegex": draw(st.booleans())}
    if draw(st.integers(0, 3)) == 0:
        spec["namespaces"] = [{"type": "dataset", "value": "props"}]
    if draw(st.integers(0, 3)) == 0:
        spec["limit"] = draw(st.integers(1, MAX_LIMIT))
    return spec


# Stands for the nested value in a document until its text is spliced in.
_DEEP = "\x00deep\x00"
_OPENERS = ["[", '{"values": ', '{"x": ', '{"arrayValue": ']
_CLOSERS = {"[": "]", "{": "}"}


def _depth(value: Any) -> int:
    """Levels of objects and arrays in a (shallow) value, itself the first."""
    children = value.values() if isinstance(value, dict) else value
    if not isinstance(value, dict | list):
        return 0
    return 1 + max((_depth(child) for child in children), default=0)


@st.composite
def otlp_json_nested(draw: st.DrawFn, parser_limit: int, limit: int) -> tuple[str, bytes, int]:
    """(signal, body, depth): a valid OTLP JSON request with a value ``levels`` deep put
    anywhere in it (under an OTLP field's name, another name, or in an array), and how
    deep the body nests in all. Levels around ``limit`` and the parser's are drawn often."""
    signal, request = draw(otlp_requests())
    doc: Any = json_format.MessageToDict(request)
    node, depth = doc, 1
    for _ in range(draw(st.integers(0, 6))):
        values = node.values() if isinstance(node, dict) else node
        children = [c for c in values if isinstance(c, dict | list)]
        if not children:
            break
        node, depth = draw(st.sampled_from(children)), depth + 1
    edges = [limit - depth, limit - depth + 1, parser_limit - depth, parser_limit - depth + 1]
    levels = draw(st.sampled_from([e for e in edges if e > 0]) | st.integers(1, 1100))
    if isinstance(node, dict):
        node[draw(st.sampled_from(OTLP_NAMES) | keys)] = _DEEP
    else:
        node.append(_DEEP)
    # A short pattern of levels, repeated: drawing each of 1,000 levels costs seconds.
    # Arrays alone half the time: arrays of arrays where json_format wants messages are
    # what its error messages repr.
    pattern = draw(st.just(["["]) | st.lists(st.sampled_from(_OPENERS), min_size=1, max_size=3))
    openers = [pattern[n % len(pattern)] for n in range(levels)]
    nested = "".join(openers) + '"x"' + "".join(_CLOSERS[o[0]] for o in reversed(openers))
    text = json.dumps(doc).replace(json.dumps(_DEEP), nested, 1)
    return signal, text.encode(), max(_depth(doc), depth + levels)
