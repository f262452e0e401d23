"""Stored events as JSON values: exact parsing and the system fields.

Pure (json and orjson only), so the ingest, store and query layers share it.
orjson reads integers beyond 64 bits as floats, silently; the standard
library keeps them exact but is several times slower, so it is used only for
texts that hold such an integer.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from decimal import Decimal
from itertools import accumulate
from typing import Any

import orjson

# The fields every stored event gains, in the order they are added.
SYSTEM_FIELDS = ("_timestamp", "_dataset", "_service", "_namespace", "_id")

# orjson keeps integers from -2**63 to 2**64-1 exact and reads larger ones as
# floats, silently. Only a text holding such an integer takes the slower
# standard-library path, which keeps them exact. Finding them must cost little
# on every batch: runs of 19+ digits are found at C speed in a copy where every
# digit is '0' (hex ids make a few per batch), and only those few are looked at.
_DIGITS_AS_ZERO = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
_LONG_RUN = b"0" * 19
_RUN_END = re.compile(rb"[^0]|$")
_SPACE = b" \t\r\n"
_INT64_MIN_MAGNITUDE = 2**63
_UINT64_MAX = 2**64 - 1
# A longer run is beyond 64 bits without converting it: Python refuses to convert more
# than 4,300 digits (a ValueError, which answered 500 for "x,<5,000 digits>" in any
# event's text, and failed every run that read such a stored event), and converting a
# long run costs time that grows with its square. (A JSON integer itself has at most
# 309 digits: orjson, which reads every text first, refuses one beyond a double.)
_MOST_DIGITS = len(str(_UINT64_MAX))


def _number_beyond_64_bits(text: bytes, start: int, end: int) -> bool:
    """Is the digit run text[start:end] an integer token out of orjson's range?"""
    if end < len(text) and text[end] in b".eE":
        return False  # a float, which orjson reads as a float anyway
    i = start - 1
    negative = i >= 0 and text[i] == 45  # '-'
    if negative:
        i -= 1
    while i >= 0 and text[i] in _SPACE:
        i -= 1
    if i < 0 or text[i] not in b"[:,":
        return False  # inside a string (or not a value): stored as sent
    if end - start > _MOST_DIGITS:
        return True
    value = int(text[start:end])
    return value > (_INT64_MIN_MAGNITUDE if negative else _UINT64_MAX)


_KINDS = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}


def json_kind(value: Any) -> str:
    """What a parsed JSON value is, in JSON's words: named in a refusal where the value
    itself cannot be shown (the repr of one nested a thousand levels passes Python's
    recursion limit)."""
    return _KINDS.get(type(value), "null" if value is None else "a number")


def has_big_integer(text: bytes) -> bool:
    """Whether the JSON text may hold an integer that orjson would turn into a float.

    A digit run inside a string that happens to follow ``:`` or ``,`` counts
    too: that costs only the slower path, never exactness.
    """
    zeros = text.translate(_DIGITS_AS_ZERO)
    start = zeros.find(_LONG_RUN)
    while start != -1:
        found = _RUN_END.search(zeros, start + 19)
        end = found.start() if found else len(zeros)
        if _number_beyond_64_bits(text, start, end):
            return True
        start = zeros.find(_LONG_RUN, end)
    return False


def _as_bytes(raw: bytes | str) -> bytes:
    return raw.encode() if isinstance(raw, str) else raw


def loads_exact(text: bytes) -> tuple[Any, bool]:
    """The parsed text, and whether it holds an integer beyond 64 bits.

    orjson parses first in every case: it is the judge of valid JSON (no NaN, no
    infinity, no unpaired surrogates, UTF-8 only), so both paths accept the same
    texts. Raises orjson.JSONDecodeError, or RecursionError for a text nested
    deeper than the standard library reads (orjson reads 1,024 levels).
    """
    value = orjson.loads(text)
    if not has_big_integer(text):
        return value, False
    return json.loads(text), True


def dumps_exact(value: Any, big: bool) -> bytes:
    """``value`` as JSON; ``big``: it holds integers beyond 64 bits, which orjson refuses."""
    if big:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    # orjson's result keeps its whole output buffer (about 4KB) however small
    # the JSON: a batch of tiny events would hold ~1,000x its size in memory.
    # A right-sized copy costs less than that over-allocation (measured faster).
    return memoryview(orjson.dumps(value)).tobytes()


# A whole number sent as a float (5.0, 1e16, -0.0) was always stored in `data` as the
# integer it equals: the column's expression (raw::JSON, DDL 0001) parses into JSON and
# the engine converts that to the column's JSON(max_dynamic_paths = 256) through text,
# where the float is written as its digits ("5", "-0") and read back as an integer
# (Int64, UInt64 beyond, a String beyond 64 bits); from 1e21 on it is written with an
# exponent and stays a float. So 5 and 5.0 group together, as the query reference
# holds. An insert now sends the text for `data` itself, parsed once (store.events.base):
# ``data_text`` writes such floats as those digits, so the stored values stay as they
# were. In the text ingest stores (orjson's or the standard library's, compact) a whole
# float ends in ".0" before ',', '}' or ']', or has a positive exponent ("1e+16"):
# looking for those costs about 1 µs an event; a string holding one costs a parse.
def _may_hold_whole_float(raw: bytes) -> bool:
    find = raw.find
    return find(b".0,") >= 0 or find(b".0}") >= 0 or find(b".0]") >= 0 or find(b"e+") >= 0


_FIXED_FROM = 1e21


def shortest_digits(value: float) -> int:
    """A whole float as the integer its shortest form writes (``1.152921504606847e18`` is
    1152921504606847000, not the 1152921504606846976 it holds in binary): what the engine
    stores for it, since JSON is parsed from the text."""
    return int(Decimal(repr(value)))


def _whole_floats_as_digits(value: Any) -> tuple[Any, bool]:
    """``value`` with each whole float below 1e21 as the integer of its shortest digits
    (what the engine writes for it), and whether anything changed."""
    if type(value) is float:
        if value.is_integer() and abs(value) < _FIXED_FROM:
            return shortest_digits(value), True
        return value, False
    if type(value) is dict:
        out: dict[str, Any] = {}
        changed = False
        for key, inner in value.items():
            out[key], moved = _whole_floats_as_digits(inner)
            changed = changed or moved
        return (out, True) if changed else (value, False)
    if type(value) is list:
        items = [_whole_floats_as_digits(inner) for inner in value]
        if any(moved for _, moved in items):
            return [inner for inner, _ in items], True
        return value, False
    return value, False


def data_text(raw: bytes) -> bytes:
    """The text an insert sends for the `data` column: ``raw`` (as ingest writes it), with
    whole floats written as the integers the engine always stored them as (above)."""
    if not _may_hold_whole_float(raw):
        return raw
    value, big = loads_exact(raw)
    value, changed = _whole_floats_as_digits(value)
    if not changed:
        return raw
    try:
        return dumps_exact(value, big)
    except TypeError:  # a float of 2**64 or more became an integer orjson cannot write
        return dumps_exact(value, True)


# How ``data_texts`` finds the marks in a batch's joined text (4.7 MB for 12,000 events of
# 0.5 kB, 2 cores): the three ".0" marks by one pattern with a literal prefix, which re
# searches at C speed (3.5 ms; as an alternation with "e+", 43 ms), and "e+" from a "+",
# which is rare in JSON outside exponents and found by memchr (bytes.find of "e+" stops
# at every "e": 5 ms). The four marks looked for text by text took 24.5 ms. Once a text is
# marked, both searches go on from the next text, and after a "+" that ends no "e+" the
# search is for "e+" itself: a text full of "+" or ".0," costs C-speed searches, not a
# turn of Python for each of them (six texts of a million "+" each: 10 ms, 19 ms looked
# for text by text; 1,250 ms when each "+" took a turn).
_DOT_ZERO_MARKS = re.compile(rb"\.0[,}\]]")


def _marked_texts(joined: bytes, starts: list[int]) -> set[int]:
    """The indexes of the texts (``joined`` at ``starts``) that hold a mark."""
    marked: set[int] = set()
    last = len(starts) - 2  # ``starts`` ends with the end of the joined text, plus one

    def text_at(at: int) -> int:
        return bisect_right(starts, at) - 1

    found = _DOT_ZERO_MARKS.search(joined)
    while found is not None:
        index = text_at(found.start())
        marked.add(index)
        found = _DOT_ZERO_MARKS.search(joined, starts[index + 1]) if index < last else None
    at = joined.find(b"+")
    while at >= 0:
        if at == 0 or joined[at - 1] != 0x65:  # not an "e+": on to the next one's "+"
            after = joined.find(b"e+", at + 1)
            at = after + 1 if after >= 0 else -1
            continue
        index = text_at(at)
        marked.add(index)
        at = joined.find(b"+", starts[index + 1]) if index < last else -1
    return marked


def data_texts(raws: Sequence[bytes]) -> list[bytes]:
    """``data_text`` of each text (the same object where nothing changes), with the marks
    of a whole float looked for in all the texts at once, then only the texts they are
    in written again."""
    joined = b"\n".join(raws)  # no mark holds a newline, so none spans two texts
    starts = list(accumulate((len(raw) + 1 for raw in raws), initial=0))
    out = list(raws)
    for index in _marked_texts(joined, starts):
        out[index] = data_text(raws[index])
    return out


def _system_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        name: int(row[name]) if name == "_timestamp" else row[name]
        for name in SYSTEM_FIELDS
        if name in row
    }


def parsed_event(row: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """``to_event``, and whether the event holds an integer beyond 64 bits."""
    event, big = loads_exact(_as_bytes(row["raw"]))
    event.update(_system_fields(row))
    return event, big


def to_event(row: Mapping[str, Any]) -> dict[str, Any]:
    """The event as sent, with the system fields added (they win over same-named keys)."""
    return parsed_event(row)[0]


# A stored text is written by the ingest's serialiser, so a key appears as its plain
# quoted name; a text without these holds no key that a system field would replace.
_SYSTEM_KEYS = tuple(f'"{name}"'.encode() for name in SYSTEM_FIELDS)


def event_json(row: Mapping[str, Any]) -> orjson.Fragment:
    """``to_event`` as JSON text: the stored text with the system fields added to it.

    Not parsed and encoded again: that was most of the time spent turning a page
    of events into the answer, and the stored text keeps integers beyond 64 bits
    exact, which orjson cannot encode. A text holding a key named like a system
    field is parsed, since the system field replaces that key.
    """
    text = _as_bytes(row["raw"])
    if b'"_' in text and any(key in text for key in _SYSTEM_KEYS):
        return orjson.Fragment(dumps_exact(*parsed_event(row)))
    body = text.strip()
    # Stored texts come from the ingest's serialiser; this only guards the splice.
    if not (body.startswith(b"{") and body.endswith(b"}")):
        raise ValueError("a stored event is not a JSON object")
    system = orjson.dumps(_system_fields(row))  # b'{"_timestamp":...}'
    empty = body[1:-1].strip() == b""
    return orjson.Fragment(body[:-1] + (b"" if empty else b",") + system[1:])
