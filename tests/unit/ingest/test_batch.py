"""Splitting a batch body into stored events and rejected elements."""

from __future__ import annotations

import json

import orjson
import pytest

from limelight.errors import BadRequest
from limelight.ingest.batch import has_big_integer, loads, parse_batch
from tests.unit.ingest.limits import limits

LIMIT = 256 * 1024


def body(value: object) -> bytes:
    return json.dumps(value).encode()


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
    entry = batch.invalid[0]
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
    assert batch.invalid[0]["event"] == at


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
