"""Splitting a batch body into stored events and rejected elements."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from limelight.errors import BadRequest
from limelight.event_json import has_big_integer
from limelight.ingest.batch import loads, parse_batch
from tests.unit.ingest.limits import limits

LIMIT = 256 * 1024


def body(value: object) -> bytes:
    return json.dumps(value).encode()


def as_sent(entry: dict[str, Any]) -> Any:
    """A rejected element's entry as the client reads it in the response."""
    return json.loads(orjson.dumps(entry))


def test_valid_events_keep_their_order_and_values() -> None:
    events = [{"a": 1}, {"b": {"c": [1, 2, None]}}, {}]
    batch = parse_batch(body(events), limits(LIMIT))
    assert [v.event for v in batch.valid] == events
    assert [v.index for v in batch.valid] == [0, 1, 2]
    assert [orjson.loads(v.raw) for v in batch.valid] == events
    assert batch.invalid == []


@pytest.mark.parametrize("element", [1, "text", None, True, [{"a": 1}], 2.5])
def test_an_element_that_is_not_an_object_is_listed_with_index_reason_and_itself(
    element: object,
) -> None:
    batch = parse_batch(body([{"ok": 1}, element, {"ok": 2}]), limits(LIMIT))
    assert [v.event for v in batch.valid] == [{"ok": 1}, {"ok": 2}]
    assert len(batch.invalid) == 1
    entry = as_sent(batch.invalid[0])
    assert entry["index"] == 1
    assert entry["event"] == element
    assert "not a JSON object" in entry["reason"]


def test_event_size_limit_is_256kb_of_json_exclusive() -> None:
    # {"p":"xxx"} is 8 bytes plus the string; make one just under and one at the limit.
    under = {"p": "x" * (LIMIT - 9)}
    at = {"p": "x" * (LIMIT - 8)}
    assert len(orjson.dumps(under)) == LIMIT - 1
    assert len(orjson.dumps(at)) == LIMIT
    batch = parse_batch(body([under, at]), limits(LIMIT))
    assert [v.index for v in batch.valid] == [0]
    assert [e["index"] for e in batch.invalid] == [1]
    assert "bytes" in batch.invalid[0]["reason"]
    assert as_sent(batch.invalid[0])["event"] == at


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"", "empty"),
        (b"  \n\t ", "empty"),
        (b"[{", "not valid JSON"),
        (b"{'a': 1}", "not valid JSON"),
        (b'{"a": 1}', "array"),
        (b'"events"', "array"),
        (b"42", "array"),
        (b"[]", "empty"),
        (b"[NaN]", "not valid JSON"),
        (b"[1e999]", "not valid JSON"),
        (b'[{"a": "\\ud800"}]', "not valid JSON"),
        (b'[{"a": "\xff"}]', "not valid JSON"),
    ],
)
def test_unusable_bodies_are_refused_whole(raw: bytes, words: str) -> None:
    with pytest.raises(BadRequest) as caught:
        parse_batch(raw, limits(LIMIT))
    assert words in str(caught.value.reason)


def test_big_integers_stay_exact() -> None:
    big = 2**64 + 1
    negative = -(2**63) - 1
    raw = f'[{{"big": {big}, "neg": {negative}, "n": [{big}]}}]'.encode()
    batch = parse_batch(raw, limits(LIMIT))
    assert batch.exact
    event = batch.valid[0].event
    assert event == {"big": big, "neg": negative, "n": [big]}
    assert json.loads(batch.valid[0].raw) == event


def test_a_body_with_a_big_integer_is_judged_like_any_other() -> None:
    # The exact path must not accept what the fast path refuses.
    with pytest.raises(BadRequest):
        loads(f'[{{"big": {2**70}, "bad": "\\ud800"}}]'.encode())
    with pytest.raises(BadRequest):
        loads(f'[{{"big": {2**70}, "inf": 1e999}}]'.encode())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"id": "a1234567890123456789012345b"}', False),  # digits inside a hex id
        ('{"ts": 1700000000123456789}', False),  # nanoseconds fit 64 bits
        (f'{{"u": {2**64 - 1}}}', False),
        (f'{{"i": {-(2**63)}}}', False),
        (f'{{"u": {2**64}}}', True),
        (f'{{"i": {-(2**63) - 1}}}', True),
        (f"[{10**30}]", True),
        (f'{{"a": [1, {10**25}]}}', True),
        ('{"f": 12345678901234567890123.5}', False),  # a float stays a float
        ('{"f": 12345678901234567890123e2}', False),
        ("[ -99999999999999999999 ]", True),
        ('{"a" :\n 99999999999999999999}', True),
        ('{"a": "x99999999999999999999"}', False),
        ('{"a": 1, "b": [1234567890123456789, 99999999999999999999999]}', True),
    ],
)
def test_only_integers_beyond_64_bits_take_the_exact_path(text: str, expected: bool) -> None:
    assert has_big_integer(text.encode()) is expected
    doc, exact = loads(text.encode())
    assert exact is expected
    assert doc == json.loads(text)


def nested(depth: int) -> bytes:
    """An event ``depth`` levels deep as JSON text: an object holding nested arrays."""
    return b'{"k":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


@pytest.mark.parametrize("depth", [129, 254, 255, 300, 1000, 1023])
def test_an_event_nested_too_deep_is_listed_and_the_others_are_stored(depth: int) -> None:
    raw = b'[{"ok": 1},' + nested(depth) + b',{"ok": 2}]'
    batch = parse_batch(raw, limits(LIMIT))
    assert [v.event for v in batch.valid] == [{"ok": 1}, {"ok": 2}]
    assert [as_sent(e) for e in batch.invalid] == [
        {"index": 1, "reason": "the event nests objects and arrays more than 128 levels deep"}
    ]


def test_an_event_nested_128_levels_deep_is_stored() -> None:
    batch = parse_batch(b"[" + nested(128) + b"]", limits(LIMIT))
    assert [v.event for v in batch.valid] == [json.loads(nested(128))]


@pytest.mark.parametrize("depth", [1025, 5000, 200_000])
def test_an_event_deeper_than_the_parser_reads_is_listed_and_the_others_are_stored(
    depth: int,
) -> None:
    # Brackets, commas and escaped quotes inside strings are text, not structure.
    raw = b'[{"ok": 1}, ' + nested(depth) + b', {"ok": "[,]\\"{\\\\"}, 7]'
    batch = parse_batch(raw, limits(LIMIT))
    assert [v.event for v in batch.valid] == [{"ok": 1}, {"ok": '[,]"{\\'}]
    listed = [as_sent(e) for e in batch.invalid]
    assert [e["index"] for e in listed] == [1, 3]
    assert "more than 128 levels" in listed[0]["reason"] and "event" not in listed[0]
    assert listed[1]["event"] == 7


def test_a_body_with_a_big_integer_and_a_deep_event_keeps_the_others_exact() -> None:
    # The exact path (the standard library) stops near its recursion limit, before orjson.
    deep = b"[" * 995 + b"]" * 995
    raw = f'[{{"big": {2**70}}}, {{"k": '.encode() + deep + b"}]"
    batch = parse_batch(raw, limits(LIMIT))
    assert batch.exact
    assert [v.event for v in batch.valid] == [{"big": 2**70}]
    assert [e["index"] for e in batch.invalid] == [1]


def test_a_rejected_element_is_listed_as_parsed_beyond_64_bits() -> None:
    raw = f'[{10**30}, {{"ok": 1}}]'.encode()
    batch = parse_batch(raw, limits(LIMIT))
    listed = [as_sent(e) for e in batch.invalid]
    assert listed == [{"index": 0, "reason": "the event is not a JSON object", "event": 10**30}]


def test_a_rejected_element_too_deep_to_write_is_listed_without_itself() -> None:
    raw = b"[" + b"[" * 300 + b"]" * 300 + b', {"ok": 1}]'
    batch = parse_batch(raw, limits(LIMIT))
    assert [as_sent(e) for e in batch.invalid] == [
        {"index": 0, "reason": "the event is not a JSON object"}
    ]


@pytest.mark.parametrize(
    "raw",
    [
        b"[" * 2000 + b"]" * 1999,  # never closed
        b"[" * 2000 + b"]" * 2001,  # closed twice
        b"[" * 2000 + b"]" * 2000 + b"x",
        b'[{"a": 1}, {"a": nope}, ' + b"[" * 2000 + b"]" * 2000 + b"]",
        b"[1,, " + b"[" * 2000 + b"]" * 2000 + b"]",
        b"{" + b"[" * 2000,
    ],
)
def test_a_deep_body_that_is_not_json_elsewhere_is_refused_whole(raw: bytes) -> None:
    with pytest.raises(BadRequest) as caught:
        parse_batch(raw, limits(LIMIT))
    assert "not valid JSON" in str(caught.value.reason)
