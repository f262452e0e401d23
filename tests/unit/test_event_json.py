"""Stored events back as JSON: the stored text with the system fields, exact."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from limelight.event_json import data_text, data_texts, dumps_exact, event_json, to_event

SYSTEM = {
    "_timestamp": 1_700_000_000_000,
    "_dataset": "logs",
    "_service": "api",
    "_namespace": "default",
    "_id": "b1000001",
}


def _row(event: Any, exact: bool = False) -> dict[str, Any]:
    # Stored as the ingest stores it.
    return {"raw": dumps_exact(event, exact).decode(), **SYSTEM}


def _read(fragment: orjson.Fragment) -> Any:
    return json.loads(orjson.dumps([fragment]))[0]


@pytest.mark.parametrize(
    "event",
    [
        {"a": {"b": [1, "x", None]}, "c.d": 2.5, "ok": True},
        {},
        {"unicode": "héllo ✓ 🚀", "escapes": 'tab\t "q" \\ \n \u2028'},
        {"_other": "kept", "service": "from the event"},
    ],
)
def test_an_event_reads_back_as_sent_with_its_system_fields(event: dict[str, Any]) -> None:
    row = _row(event)
    assert _read(event_json(row)) == {**event, **SYSTEM} == to_event(row)
    # The very text of encoding the parsed event: same keys, once each, in the same order.
    assert orjson.dumps(event_json(row)) == orjson.dumps(to_event(row))


@pytest.mark.parametrize(
    "event",
    [
        {"_timestamp": "mine", "_id": 7, "n": 1},
        {"n": 1, "nested": {"_service": "inner"}, "note": '"_dataset"'},
    ],
)
def test_a_key_named_like_a_system_field_gives_way_to_it(event: dict[str, Any]) -> None:
    row = _row(event)
    assert _read(event_json(row)) == {**event, **SYSTEM}
    # Each key once (a dict's encoding), the system fields where the event had them.
    assert orjson.dumps(event_json(row)) == orjson.dumps(to_event(row))


def test_integers_beyond_64_bits_stay_exact() -> None:
    event = {"big": 2**70, "neg": -(2**63) - 5, "nested": [{"id": 123456789012345678901234567890}]}
    for row in (_row(event, exact=True), _row({**event, "_id": 1}, exact=True)):
        text = orjson.dumps({"events": [event_json(row)]})
        assert b"1180591620717411303424" in text
        assert b"123456789012345678901234567890" in text
        assert json.loads(text)["events"][0]["big"] == 2**70


@pytest.mark.parametrize("digits", [21, 4301, 50_000])
def test_text_with_a_long_run_of_digits_reads_back_as_sent(digits: int) -> None:
    """A run after ``,`` in a string reads like an integer; past 4,300 digits Python
    refuses to convert it, which answered 500 at ingest and failed every run that read
    such an event."""
    event = {"message": "x," + "1" * digits, "list": [1, "2," + "3" * digits], "f": 5.0}
    assert to_event(_row(event)) == {**event, **SYSTEM}
    # The whole float has data_text parse the text, which it writes as an integer.
    assert json.loads(data_text(_row(event)["raw"].encode())) == {**event, "f": 5}


# Whole floats (the marks data_text looks for) among other numbers and strings that hold
# the marks' characters, so that a batch's texts both hold and lack them.
_MARKED_VALUES = st.one_of(
    st.sampled_from([5.0, -0.0, 1e16, 1e21, 2.5, 0.05, 10.25, "5.0,", "e+", "C++", "x.0]"]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(),  # beyond 64 bits too: written by the standard library's serialiser
    st.text(alphabet=".0e+,}]", max_size=6),
)
_MARKED_EVENTS = st.recursive(
    _MARKED_VALUES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
).map(lambda value: {"v": value})


@given(st.lists(_MARKED_EVENTS, max_size=12))
def test_a_batch_gets_the_data_texts_its_events_get_one_by_one(events: list[Any]) -> None:
    raws = []
    for event in events:
        try:
            raws.append(dumps_exact(event, False))
        except TypeError:  # an integer beyond 64 bits: stored by the standard library
            raws.append(dumps_exact(event, True))
    out = data_texts(raws)
    assert out == [data_text(raw) for raw in raws]
    # The texts without a whole float are sent as they are, not copied.
    assert all(o is raw for o, raw in zip(out, raws, strict=True) if data_text(raw) is raw)


def test_a_batch_rewrites_only_the_texts_with_whole_floats() -> None:
    raws = [b'{"a":1.5}', b'{"b":5.0}', b'{"c":"1e+16 in a string"}', b'{"d":[1e+16]}']
    out = data_texts(raws)
    assert out == [raws[0], b'{"b":5}', raws[2], b'{"d":[10000000000000000]}']
    assert out[0] is raws[0] and out[2] is raws[2]


@pytest.mark.parametrize(
    "raws",
    [
        [b'{"s":"' + b"+" * 5000 + b'"}', b'{"n":1e+16}', b'{"s":"' + b"+" * 5000 + b'"}'],
        [b'{"s":"' + b".0," * 3000 + b'"}', b'{"a":1}', b'{"b":2.0}'],
        # No "e+" across two texts (a text that starts with "+" is none of ingest's; only
        # a text with a mark is parsed, so this one never is).
        [b'{"s":"e"}', b'+{"b":1}', b'{"s":"e+"}', b""],
    ],
)
def test_texts_crowded_with_marks_get_what_each_gets_alone(raws: list[bytes]) -> None:
    assert data_texts(raws) == [data_text(raw) for raw in raws]
