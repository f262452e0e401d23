"""How deep an event may nest, and the elements of a batch too deep to parse whole.

An event may nest objects and arrays ``MAX_EVENT_DEPTH`` levels deep (the
event itself is the first level). The parser reads 1,024 levels and the
serialiser writes 254, so without a limit of our own an event 255 to 1,023
levels deep failed the whole batch, and one deeper than that made the body
"not valid JSON". Now such an event is listed as invalid and the others are
stored: ``array_elements`` finds the elements of a body the parser refused,
with the depth of each, without parsing them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MAX_EVENT_DEPTH = 128

# A string (its brackets and commas are text), a run of openers, a run of closers, a comma.
# A string left open runs to the end of the text: tried as a string at each of its
# quotes, 40,000 escaped quotes (80 KB) held the event loop 20 s, the time growing with
# the square of the length.
STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)'
_TOKENS = re.compile(STRING + rb"|[\[{]+|[\]}]+|,", re.DOTALL)
_QUOTE, _COMMA = ord('"'), ord(",")
_OPENERS = frozenset(b"[{")
_JSON_SPACE = b" \t\r\n"


def may_nest_deeper_than(raw: bytes, limit: int) -> bool:
    """False when the JSON text cannot nest more than ``limit`` levels: a cheap first test.

    Each level opens with ``{`` or ``[``; brackets inside strings only add to the count.
    """
    return raw.count(b"{") + raw.count(b"[") > limit


def nests_deeper_than(value: Any, limit: int) -> bool:
    """Whether objects and arrays nest more than ``limit`` levels in ``value`` (itself the first).

    A loop, not recursion: the value may be nested deeper than Python's recursion limit.
    """
    if not isinstance(value, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


@dataclass(frozen=True, slots=True)
class Element:
    """One element of a JSON array as text, and how many levels it nests (0 for a scalar)."""

    text: bytes
    depth: int


def array_elements(body: bytes) -> list[Element] | None:
    """The elements of the JSON array ``body``, found by its brackets, commas and strings.

    None when ``body`` is not an array that way (no opening bracket, never closed,
    closed twice, text after it). The elements are not checked: each is parsed
    on its own afterwards, which tells whether it is valid JSON. An empty array
    gives no element.
    """
    text = body.strip(_JSON_SPACE)
    if not text.startswith(b"["):
        return None
    elements: list[Element] = []
    start, depth, deepest = 1, 0, 0  # depth inside the array: 0 between its elements
    for token in _TOKENS.finditer(text, 1):
        first = text[token.start()]
        if first == _QUOTE:
            continue
        if first == _COMMA:
            if depth == 0:
                elements.append(Element(text[start : token.start()], deepest))
                start, deepest = token.end(), 0
            continue
        run = token.end() - token.start()
        if first in _OPENERS:
            depth += run
            deepest = max(deepest, depth)
            continue
        if run <= depth:
            depth -= run
            continue
        # This run closes the array itself: after the element's own levels, one more.
        closing = token.start() + depth
        if run != depth + 1 or text[closing + 1 :].strip(_JSON_SPACE):
            return None
        last = text[start:closing]
        if elements or last.strip(_JSON_SPACE):
            elements.append(Element(last, deepest))
        return elements
    return None
