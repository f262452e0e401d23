"""Filter operations as data: name -> value shape, accepted kinds, SQL templates.

Templates see ``{k}`` (the key as the value's kind), ``{a}`` (the key as an
array of that kind) and ``{v}`` (a bound parameter, or another key for a
``{key, type}`` reference). A negated operation matches events whose key is
present and where its positive operation does not match, so a missing key
never matches either one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from limelight.event_json import shortest_digits
from limelight.query.keys import FLOAT_EXACT_LIMIT, KINDS, Kind

ValueShape = Literal["one", "list", "none"]

# The most values an IN or NOT_IN filter holds. Each value the statement tests is a bound
# parameter of 9 bytes or more (`{p1000:Bool}, `), so more than this never fits in a
# statement the engine reads (``scope.MAX_STATEMENT_BYTES``, 262,144 bytes); refused
# before anything is built, as a list of 2.9 million values took 24 s of a core to build
# into a statement of 112 MB before that was refused.
MAX_LIST_VALUES = 30_000

_ALL: frozenset[Kind] = frozenset(KINDS)
_ORDERED: frozenset[Kind] = frozenset({"string", "number"})
_TEXT: frozenset[Kind] = frozenset({"string"})


@dataclass(frozen=True)
class Operator:
    name: str
    shape: ValueShape
    kinds: frozenset[Kind] = _ALL  # kinds of value it accepts
    scalar: str | None = None  # template over the key as a scalar of the value's kind
    scalar_kinds: frozenset[Kind] | None = None  # kinds the scalar template serves (default: all)
    array: str | None = None  # template over the key as an array of the value's kind
    negates: str | None = None  # the positive operation this one negates
    presence: str | None = None  # for EXISTS-like operations: "{exists}" or "NOT {exists}"
    like_pattern: bool = False  # the value is a LIKE pattern (see ``like_pattern_problem``)

    def check_value(self, value: object) -> str | None:
        """Why ``value`` does not suit this operation, or None."""
        allowed = ", ".join(k for k in KINDS if k in self.kinds)
        if self.shape == "none":
            return None  # EXISTS / DOES_NOT_EXIST take no value; one sent is ignored
        if self.shape == "list":
            many = value.count(",") + 1 if isinstance(value, str) else 0
            if isinstance(value, list):
                many = len(value)
            if many > MAX_LIST_VALUES:
                return f"{self.name} takes at most {MAX_LIST_VALUES:,} values"
            if isinstance(value, str):
                return None if split_list(value) else f"{self.name} needs at least one value"
            if not isinstance(value, list) or not value:
                return f"{self.name} needs an array of values (or a comma-separated string)"
            return None
        if value is None or isinstance(value, list):
            return f"{self.name} needs one value: a {allowed} literal or {{key, type}}"
        kind = value_kind(value)
        if kind not in self.kinds:
            return f"{self.name} does not take a {kind} value; allowed: {allowed}"
        if self.like_pattern and isinstance(value, str):
            return like_pattern_problem(value)
        return None


def like_pattern_problem(pattern: str) -> str | None:
    """Why the engine would refuse a LIKE pattern, or None.

    A backslash escapes the character after it, so one at the very end escapes
    nothing: the engine fails the whole run on it (an even run of them is fine).
    """
    trailing = len(pattern) - len(pattern.rstrip("\\"))
    if trailing % 2:
        return (
            "a LIKE pattern cannot end in a lone backslash: a backslash escapes the"
            " character after it (\\%, \\_); write \\\\ for a backslash"
        )
    return None


def value_kind(value: object) -> Kind:
    """The kind of a literal, or of a ``{key, type}`` reference (string when untyped)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    ref_type: Any = getattr(value, "type", None)
    return ref_type if ref_type in KINDS else "string"


# The integers the engine stores as integers: Int64's least to UInt64's most.
ENGINE_INTEGERS = range(-(2**63), 2**64)


def exact_number(value: Any) -> Any:
    """A filter's value as compared: a whole float from 2**53 on (``1e16``,
    ``9007199254740992.0``) is the integer an event sent with it stores (its shortest
    digits, ``event_json.shortest_digits``), compared exactly as an integer would be,
    not through the key's Float64 view, where it would equal the stored integers beside
    it. One past the engine's integers stays a float; -0.0 is 0.0 (``has`` tells them
    apart, ``=`` does not)."""
    if not isinstance(value, float):
        return value
    if value.is_integer() and abs(value) >= FLOAT_EXACT_LIMIT:
        digits = shortest_digits(value)
        return digits if digits in ENGINE_INTEGERS else value
    return value + 0.0  # -0.0 + 0.0 is 0.0


def integer_type(value: int) -> str:
    """The engine's type to bind an integer as: UInt64 from 2**63 on."""
    return "UInt64" if value >= 2**63 else "Int64"


def beyond_float(value: Any) -> bool:
    """An integer from 2**53 on: as a Float64 it would equal its neighbours, so it is
    compared with each stored type of the key as it is (the engine compares integers
    and floats exactly), not with the key's Float64 view."""
    return (
        isinstance(value, int) and not isinstance(value, bool) and abs(value) >= FLOAT_EXACT_LIMIT
    )


def _table(*ops: Operator) -> Mapping[str, Operator]:
    return {op.name: op for op in ops}


OPERATORS: Mapping[str, Operator] = _table(
    Operator("=", "one", scalar="{k} = {v}"),
    Operator("!=", "one", negates="="),
    Operator(">", "one", _ORDERED, scalar="{k} > {v}"),
    Operator(">=", "one", _ORDERED, scalar="{k} >= {v}"),
    Operator("<", "one", _ORDERED, scalar="{k} < {v}"),
    Operator("<=", "one", _ORDERED, scalar="{k} <= {v}"),
    Operator("LIKE", "one", _TEXT, scalar="{k} LIKE {v}", like_pattern=True),
    Operator("NOT_LIKE", "one", _TEXT, negates="LIKE", like_pattern=True),
    # INCLUDES: a substring of a string, or an element of an array.
    Operator(
        "INCLUDES",
        "one",
        scalar="position({k}, {v}) > 0",
        scalar_kinds=_TEXT,
        array="has({a}, {v})",
    ),
    Operator("DOES_NOT_INCLUDE", "one", negates="INCLUDES"),
    Operator("MATCH_REGEX", "one", _TEXT, scalar="match({k}, {v})"),
    Operator("STARTS_WITH", "one", _TEXT, scalar="startsWith({k}, {v})"),
    Operator("EXISTS", "none", presence="{exists}"),
    Operator("DOES_NOT_EXIST", "none", presence="NOT {exists}"),
    Operator("IN", "list", scalar="has({v}, {k})"),
    Operator("NOT_IN", "list", negates="IN"),
)

_NUMBER = re.compile(r"-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?")


# An integer a filter compares exactly: as the spec's own integers, up to UInt64's
# (20 digits, leading zeros aside).
_INTEGER = re.compile(r"-?0*\d{1,20}")


def split_list(text: str) -> list[str | float]:
    """``"a, 200"`` -> ``["a", "200", 200.0]``: untyped text also matches as a number,
    an integer from 2**53 on as the integer (``beyond_float``), not its neighbour."""
    out: list[str | float] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        out.append(part)
        number = int(part) if _INTEGER.fullmatch(part) else None
        if number is not None and beyond_float(number) and number in ENGINE_INTEGERS:
            out.append(number)
        elif _NUMBER.fullmatch(part):
            out.append(float(part))
    return out


def list_values(value: object) -> list[Any]:
    """The values an IN / NOT_IN filter tests against (a comma-separated string is split)."""
    if isinstance(value, list):
        return [exact_number(v) for v in value]
    if isinstance(value, str):
        return [exact_number(v) for v in split_list(value)]
    return []


def kinds_of(values: list[Any]) -> Iterator[tuple[Kind, list[Any]]]:
    """Group list values by kind, in the fixed order of KINDS (stable SQL)."""
    for kind in KINDS:
        group = [v for v in values if value_kind(v) == kind]
        if group:
            # Numbers as floats (one SQL type), but for the integers a float would round.
            yield kind, [float(v) if kind == "number" and not beyond_float(v) else v for v in group]
