"""A regex that is a few texts: what people type with the regex box ticked.

``ERR-[0-9]+``, ``"status":5\\d{2}``, ``50[0-9]`` or plain ``card_declined``: literal
characters and small classes, repeated. Such a regex finds text exactly where one of a
few texts occurs (``ERR-0`` to ``ERR-9``), and each of those is a needle the text
indexes answer from their dictionaries (``query.needle``), where the regex itself can
only be tested on every event's ``raw``.

Only the ends of a regex may repeat freely, since it is searched for anywhere in the
text: ``a+b`` is found exactly where ``ab`` is (a match of ``aab`` holds ``ab``) and
``ERR-[0-9]+`` where ``ERR-[0-9]`` is. An atom between them must repeat a fixed number
of times. Anything else (``.``, groups, alternation, anchors, escapes of letters but
``\\d``, classes that are negated or name a set) is not read here: the caller tests the
regex on ``raw`` as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import product
from string import punctuation

# How many texts a regex may stand for (``\d{3}``: 1,000 digit grams, one lookup); the
# caller bounds those that each cost a dictionary scan.
MAX_TEXTS = 1000
# The longest text read (a regex can repeat an atom a million times).
MAX_TEXT = 256
# The most repeats RE2 takes; past it the pattern is an error, which the run reports.
_MAX_REPEAT = 1000
_META = set("\\.^$*+?()[]{}|")
_REPEAT = re.compile(r"\{([0-9]+)(?:(,)([0-9]*))?\}\??|([*+?])\??")
_DIGITS = "0123456789"


@dataclass(frozen=True)
class _Atom:
    chars: str  # the characters it matches (one, for a literal)
    least: int  # times it repeats, at least
    most: int | None  # at most (None: no bound)


def regex_texts(pattern: str) -> list[str] | None:
    """The texts, one of which occurs in the text wherever the RE2 ``pattern``, searched
    for anywhere, finds a match, and only there; None where the pattern is not read
    here or stands for nothing, everything (an empty text) or too many."""
    atoms = _atoms(pattern)
    if not atoms:
        return None
    # The ends: an atom that may be absent is dropped, the others repeat their least.
    while atoms and atoms[0].least == 0:
        atoms.pop(0)
    while atoms and atoms[-1].least == 0:
        atoms.pop()
    if not atoms or any(a.least != a.most for a in atoms[1:-1]):
        return None
    if sum(a.least for a in atoms) > MAX_TEXT:
        return None
    total = 1
    for a in atoms:
        total *= len(a.chars) ** a.least
    if total > MAX_TEXTS:
        return None
    choices = [a.chars for a in atoms for _ in range(a.least)]
    return ["".join(p) for p in product(*choices)]


def _atoms(pattern: str) -> list[_Atom] | None:
    atoms: list[_Atom] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            escaped = _escape(pattern[i + 1 : i + 2])
            if escaped is None:
                return None
            chars, i = escaped, i + 2
        elif c == "[":
            end = pattern.find("]", i + 2)
            inner = _class(pattern[i + 1 : end]) if end > 0 else None
            if inner is None:
                return None
            chars, i = inner, end + 1
        elif c in _META:
            return None  # `.`, a group, an alternative, an anchor, a stray repeat
        else:
            chars, i = c, i + 1
        least: int = 1
        most: int | None = 1
        repeat = _REPEAT.match(pattern, i)
        if repeat is not None:
            least, most = _bounds(repeat)
            i = repeat.end()
        elif pattern[i : i + 1] == "{":
            return None  # RE2 and Python read a brace that is no repeat differently
        if (most is not None and most < least) or max(least, most or 0) > _MAX_REPEAT:
            return None  # RE2 refuses it: the engine says so
        atoms.append(_Atom(chars, least, most))
    return atoms


def _escape(escaped: str) -> str | None:
    """What ``\\`` and ``escaped`` match: the digits for ``d``, punctuation itself (as
    RE2 takes it); None for the rest (``\\s``, ``\\w``, ``\\b``, codes), not read."""
    if escaped == "d":
        return _DIGITS
    return escaped if escaped and escaped in punctuation else None


def _bounds(repeat: re.Match[str]) -> tuple[int, int | None]:
    low, comma, high, sign = repeat.groups()
    if sign is not None:
        return {"*": (0, None), "+": (1, None), "?": (0, 1)}[sign]
    if not comma:
        return int(low), int(low)
    return int(low), (int(high) if high else None)


def _class(inner: str) -> str | None:
    """The characters of a class ``[...]`` of ASCII letters, digits and ranges of them,
    and escaped punctuation; None for anything else (negated, named, other escapes)."""
    if not inner or inner.startswith("^"):
        return None
    chars: list[str] = []
    i = 0
    while i < len(inner):
        c = inner[i]
        if c == "\\":
            escaped = _escape(inner[i + 1 : i + 2])
            if escaped is None or (inner[i + 2 : i + 3] == "-" and i + 3 < len(inner)):
                return None  # `[\\.-z]` is a range to RE2 (`.` to `z`): not read
            chars += escaped
            i += 2
            continue
        if c == "[" or not c.isascii():
            return None  # [:digit:] and the like; past ASCII, case folds further
        if inner[i + 1 : i + 2] == "-" and i + 2 < len(inner):
            high = inner[i + 2]
            if not (c.isalnum() and high.isalnum() and c <= high) or high == "\\":
                return None
            chars += [chr(x) for x in range(ord(c), ord(high) + 1)]
            i += 3
            continue
        chars.append(c)
        i += 1
    return "".join(dict.fromkeys(chars))
