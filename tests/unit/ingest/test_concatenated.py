"""JSON objects one after another: the quick cuts and the careful scan agree."""

from __future__ import annotations

import json
import time
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from limelight.ingest.concatenated import (
    MAX_TRIES,
    NotConcatenatedJson,
    Parsed,
    TooDeep,
    _careful,
    concatenated_values,
)
from limelight.ingest.nesting import array_elements
from tests.properties.strategies import events


def values(body: bytes, max_depth: int = 128) -> list[Any]:
    return [v.value if isinstance(v, Parsed) else v for v in concatenated_values(body, max_depth)]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"a":1}', [{"a": 1}]),
        (b'{"a":1}{"b":2}', [{"a": 1}, {"b": 2}]),
        (b' {"a":1}\n\r\n {"b":2}\n', [{"a": 1}, {"b": 2}]),
        (b'{"s":"} {"}{"t":"}{"}', [{"s": "} {"}, {"t": "}{"}]),
        (b'{"a":{"b":{}}}{"c":[{}]}', [{"a": {"b": {}}}, {"c": [{}]}]),
        (b'{"n":123456789012345678901234}', [{"n": 123456789012345678901234}]),
        # Read, for the event's own checks to refuse as "not an object".
        (b"[1]", [[1]]),
    ],
)
def test_objects_are_found_whatever_their_text_holds(body: bytes, expected: list[Any]) -> None:
    assert values(body) == expected
    assert [v.value for v in _careful(body.strip(), 128) if isinstance(v, Parsed)] == expected


def test_an_object_full_of_cuts_takes_the_careful_way() -> None:
    text = "}{" * (MAX_TRIES * 3)
    body = orjson.dumps({"s": text}) + orjson.dumps({"t": 1})
    assert values(body) == [{"s": text}, {"t": 1}]


def test_an_object_deeper_than_the_parser_reads_is_too_deep_and_the_others_kept() -> None:
    deep = b'{"a":' * 3000 + b"1" + b"}" * 3000
    found = values(b'{"x":1}' + deep + b'{"y":2}')
    assert found[0] == {"x": 1} and found[2] == {"y": 2}
    assert isinstance(found[1], TooDeep) and found[1].depth == 3000


@pytest.mark.parametrize(
    ("body", "index"),
    [
        (b'{"a":1}{"b":', 1),
        (b'{"a":1} 2', 1),
        (b'{"a":1}}', 0),  # the brackets close more than they open: no object ends
        (b'{"a":[}', 0),
        (b'{"a":NaN}', 0),
        (b"\xff", 0),
        (b'{"a":1}{"b":"open\\"}', 1),  # a string left open, its quote escaped
        (b'{"a":1}{"b":"open\\', 1),
    ],
)
def test_what_is_not_objects_names_the_first_that_is_not(body: bytes, index: int) -> None:
    with pytest.raises(NotConcatenatedJson) as raised:
        concatenated_values(body, 128)
    assert raised.value.index == index


def test_a_string_left_open_is_read_once_not_again_at_each_of_its_quotes() -> None:
    """Tried as a string at each escaped quote, 40,000 of them (80 KB) took 20 s while
    the server answered nothing else, the time growing with the square of the length:
    a 6 MB body was hours. Now it is one pass (0.2 s here)."""
    body = b'{"event":"' + b'\\"' * 3_000_000
    started = time.perf_counter()
    with pytest.raises(NotConcatenatedJson):
        concatenated_values(body, 128)
    assert array_elements(b'["' + body) is None
    assert time.perf_counter() - started < 10


@settings(max_examples=50)
@given(st.lists(events, min_size=1, max_size=5), st.sampled_from(["", "\n", " \r\n"]))
def test_any_events_written_one_after_another_are_read_back(
    written: list[dict[str, Any]], separator: str
) -> None:
    body = separator.join(json.dumps(e) for e in written).encode()
    assert values(body, 10_000) == json.loads("[" + ",".join(json.dumps(e) for e in written) + "]")
