"""Hypothesis strategies for the shippers' formats: Elasticsearch bulk bodies, Loki push
requests (JSON and snappy protobuf), Splunk HEC bodies. Each is usually well formed, with
odd documents inside, and sometimes spoilt."""

from __future__ import annotations

import json

from hypothesis import strategies as st

from tests.properties.strategies import deep_texts, element_texts, events, json_values, keys, times

SPOILS = [b",", b"]", b"[", b"{", b"}", b'"', b"\\", b"\xff", b"NaN", b" ", b"\n", b"\r\n"]


@st.composite
def spoilt(draw: st.DrawFn, body: bytes) -> bytes:
    """``body``, or the same cut, with junk inserted, or replaced by bytes."""
    spoil = draw(st.sampled_from(["none", "none", "none", "cut", "insert", "bytes"]))
    if spoil == "cut" and body:
        return body[: draw(st.integers(0, len(body) - 1))]
    if spoil == "insert":
        at = draw(st.integers(0, len(body)))
        return body[:at] + draw(st.sampled_from(SPOILS)) + body[at:]
    if spoil == "bytes":
        return draw(st.binary(max_size=60))
    return body


index_names = st.one_of(
    st.sampled_from(["logs", "app-logs", "logstash-2026.11.27", ".", "..", "", "a:b/c", "ü"]),
    st.text(max_size=12),
)
metadata = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "_index": st.one_of(index_names, json_values),
            "_id": json_values,
            "_type": st.just("_doc"),
            "pipeline": st.text(max_size=5),
        },
    ),  # fmt: skip
    json_values,
)
actions = st.one_of(
    st.sampled_from(["index", "create", "update", "delete"]),
    st.sampled_from(["upsert", "search", "", "INDEX"]),
)


@st.composite
def action_lines(draw: st.DrawFn) -> list[str]:
    """An action line and, for most, the document line after it."""
    action = draw(actions)
    line = (
        json.dumps({action: draw(metadata)})
        if draw(st.integers(0, 9))
        else draw(st.sampled_from(["{}", "[]", "null", '{"index": {}, "create": {}}', "x"]))
    )
    if action == "delete" and draw(st.booleans()):
        return [line]
    return [line, draw(element_texts())]


@st.composite
def bulk_bodies(draw: st.DrawFn) -> bytes:
    lines = [line for pair in draw(st.lists(action_lines(), max_size=6)) for line in pair]
    end = draw(st.sampled_from(["\n", "\r\n"]))
    body = "".join(line + end for line in lines).encode()
    return draw(spoilt(body))


filter_paths = st.one_of(
    st.none(),
    st.sampled_from(["errors,items.*.error,items.*.status", "took", "**", "-items", "*.*"]),
    st.text(alphabet="*.-,_aeirst", max_size=12),
)


# ---------------------------------------------------------------- Loki

label_names = st.one_of(st.sampled_from(["service_name", "service", "job", "dataset", "app"]), keys)
label_values = st.one_of(index_names, st.text(max_size=10))
loki_times = st.one_of(
    st.integers(0, 2**64),
    st.integers(1_700_000_000 * 10**9, 1_900_000_000 * 10**9),
    st.integers(-(2**63), -1),
)
loki_lines = st.one_of(st.text(max_size=30), element_texts())


@st.composite
def loki_json_bodies(draw: st.DrawFn) -> bytes:
    """A push request in JSON: usually well formed, with odd labels, times and lines."""
    streams = []
    for _ in range(draw(st.integers(0, 3))):
        labels = draw(st.dictionaries(label_names, st.one_of(label_values, json_values),
                                      max_size=4))  # fmt: skip
        values = []
        for _ in range(draw(st.integers(0, 4))):
            stamp = draw(st.one_of(loki_times.map(str), loki_times, json_values))
            entry = [stamp, draw(loki_lines)]
            if draw(st.booleans()):
                metadata = st.dictionaries(keys, st.text(max_size=5) | json_values, max_size=3)
                entry.append(draw(metadata))
            values.append(entry)
        streams.append({"stream": labels, "values": values})
    body = json.dumps({"streams": streams}).encode()
    return draw(spoilt(body))


selectors = st.one_of(
    st.dictionaries(label_names, label_values, max_size=4).map(
        lambda labels: "{" + ", ".join(f"{k}={json.dumps(v)}" for k, v in labels.items()) + "}"
    ),
    st.sampled_from(["", "{}", "app=x", '{a="b"', '{a="\\"}', '{a="b"} x']),
    st.text(max_size=15),
)


@st.composite
def loki_protobuf_messages(draw: st.DrawFn) -> bytes:
    """A PushRequest's protobuf bytes (not yet compressed), or junk."""
    from limelight.ingest.loki_wire import PushRequest

    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=60))
    request = PushRequest()
    for _ in range(draw(st.integers(0, 3))):
        stream = request.streams.add(labels=draw(selectors))
        for _ in range(draw(st.integers(0, 4))):
            entry = stream.entries.add(line=draw(loki_lines))
            entry.timestamp.seconds = draw(st.integers(-(2**63), 2**63 - 1))
            entry.timestamp.nanos = draw(st.integers(-(2**31), 2**31 - 1))
            for name, value in draw(st.dictionaries(keys, st.text(max_size=5), max_size=3)).items():
                entry.structuredMetadata.add(name=name, value=value)
    data: bytes = request.SerializeToString()
    return data


# ---------------------------------------------------------------- Splunk HEC

hec_fields = st.fixed_dictionaries(
    {},
    optional={
        "event": st.one_of(events, json_values, st.just(""), st.just({})),
        "time": st.one_of(times, st.floats(allow_nan=False), st.text(max_size=8)),
        "host": json_values,
        "source": st.text(max_size=5),
        "sourcetype": st.text(max_size=5),
        "index": st.one_of(index_names, json_values),
        "fields": st.one_of(st.dictionaries(keys, json_values, max_size=3), json_values),
    },
)


@st.composite
def hec_bodies(draw: st.DrawFn) -> bytes:
    """An /event body: objects one after another (or one a line), odd ones inside, and
    sometimes spoilt or deeper than the parser reads."""
    texts = [json.dumps(draw(hec_fields)) for _ in range(draw(st.integers(0, 5)))]
    if draw(st.integers(0, 5)) == 0:
        texts.append('{"event": ' + draw(deep_texts) + "}")
    if draw(st.integers(0, 5)) == 0:
        texts.append(json.dumps({"event": {"s": "}{" * draw(st.integers(1, 30))}}))
    body = draw(st.sampled_from(["", "\n", " "])).join(texts).encode()
    return draw(spoilt(body))
