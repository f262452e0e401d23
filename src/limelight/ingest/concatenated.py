"""JSON objects one after another (``{..}{..}`` or one a line), as Splunk's HTTP Event
Collector takes them: the text of each, found without parsing the body twice.

The quick way cuts the body where ``}`` and ``{`` meet (whitespace between) and has
orjson judge each piece: a cut inside a string leaves a piece that does not parse,
and the next cut is tried. An object full of such cuts, or nested deeper than orjson
reads, sends the whole body the careful way, once: a scan of its strings and brackets
(linear, at any depth), which tells each object's end and depth without parsing it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import chain
from typing import Any

import orjson

from limelight.errors import InvalidValue
from limelight.event_json import has_big_integer, loads_exact
from limelight.ingest.nesting import STRING

_CUT = re.compile(rb"\}[ \t\r\n]*(?=\{)")
_SPACE = b" \t\r\n"
# Pieces tried for one object before the careful way is taken.
MAX_TRIES = 8
# A string (its brackets are text), a run of openers, a run of closers.
_TOKENS = re.compile(STRING + rb"|[\[{]+|[\]}]+", re.DOTALL)
_QUOTE = ord('"')
_OPENERS = frozenset(b"[{")


@dataclass(slots=True)
class Parsed:
    """One value: parsed, with whether it holds integers beyond 64 bits."""

    value: Any
    exact: bool


@dataclass(slots=True)
class TooDeep:
    """An object nested deeper than the parser reads (``depth`` levels)."""

    depth: int


class NotConcatenatedJson(InvalidValue):
    """The body is not JSON objects one after another; ``index`` is the first that is not."""

    def __init__(self, index: int) -> None:
        super().__init__(f"value {index} is not a JSON object")
        self.index = index


def _quick(body: bytes) -> list[Parsed] | None:
    """The objects by cuts, or None when the careful way must tell (a body that may hold
    an integer beyond 64 bits takes it too: it parses each object exactly)."""
    if has_big_integer(body):
        return None
    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    out: list[Parsed] = []
    start, tries = 0, 0
    # A cut ends where the next object starts (the space before it is the piece's).
    for end in chain((m.end() for m in _CUT.finditer(body)), (len(body),)):
        try:
            value = loads(body[start:end])
        except decode_error:
            tries += 1
            if tries >= MAX_TRIES:
                return None
            continue
        out.append(Parsed(value, False))
        start, tries = end, 0
    return out if start == len(body) else None


def _exact(text: bytes) -> Parsed:
    value, exact = loads_exact(text)
    return Parsed(value, exact)


def _careful(body: bytes, max_depth: int) -> list[Parsed | TooDeep]:
    """Each top-level object's text by the brackets around it, parsed on its own."""
    out: list[Parsed | TooDeep] = []
    start: int | None = None
    depth = deepest = 0
    position = 0
    for token in _TOKENS.finditer(body):
        gap = body[position : token.start()]
        first = body[token.start()]
        # Between values only space, and each value an object (or an array, which the
        # quick way reads too: the event's checks refuse it as not an object).
        if depth == 0 and (gap.strip(_SPACE) or first not in _OPENERS):
            raise NotConcatenatedJson(len(out))
        position = token.end()
        if first == _QUOTE:
            continue
        run = token.end() - token.start()
        if first in _OPENERS:
            if depth == 0:
                start, deepest = token.start(), 0
            depth += run
            deepest = max(deepest, depth)
            continue
        if run > depth:
            raise NotConcatenatedJson(len(out))
        depth -= run
        if depth == 0 and start is not None:
            out.append(_object(body[start : token.end()], deepest, max_depth, len(out)))
            start = None
    if depth or body[position:].strip(_SPACE):
        raise NotConcatenatedJson(len(out))
    return out


def _object(text: bytes, depth: int, max_depth: int, index: int) -> Parsed | TooDeep:
    if depth > max_depth:
        return TooDeep(depth)
    try:
        return _exact(text)
    except (orjson.JSONDecodeError, RecursionError):
        raise NotConcatenatedJson(index) from None


def concatenated_values(body: bytes, max_depth: int) -> list[Parsed | TooDeep]:
    """The values of ``body``, in order. Raises ``NotConcatenatedJson``.

    On the careful way an object nested more than ``max_depth`` levels is ``TooDeep``
    and is not parsed; the quick way parses what orjson reads (1,024 levels) and leaves
    the depth of each to the checks of every event."""
    body = body.strip(_SPACE)
    quick = _quick(body)
    if quick is not None:
        return list(quick)
    return _careful(body, max_depth)
