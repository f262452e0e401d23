"""Hypothesis strategies for the shippers' formats: Elasticsearch bulk bodies, Loki push
requests (JSON and snappy protobuf), Splunk HEC bodies. Each is usually well formed, with
odd documents inside, and sometimes spoilt."""

from __future__ import annotations

import json

from hypothesis import strategies as st

from tests.properties.strategies import element_texts, json_values

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
