"""A key's values in an event as one column, for counting them: field values and BubbleUp.

Each value is written as text tagged with its kind (``s`` string, ``n`` number,
``b`` boolean, ``r`` the index of a number's bucket), so that "5" and 5 stay
apart in one GROUP BY over a key whose path holds both, and the answer can give
each value back with its kind (``decode``). Numbers are one kind, as in the
query semantics: 5 and 5.0 are one value. An array counts as each of its
distinct elements (an event with ``tags: ["a", "b"]`` has the values "a" and "b"),
so a value's share is that of the events holding it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from limelight.query.keys import KeyExpr, Kind

_TAGS: dict[Kind, str] = {"string": "s", "number": "n", "boolean": "b"}
RANGE_TAG = "r"
_INTEGER = re.compile(r"-?[0-9]+")
NO_VALUES = "CAST([], 'Array(Nullable(String))')"  # typed: an untyped [] cannot be joined out


def _tagged(kind: Kind, sql: str, exact: str | None = None) -> str:
    """The value as tagged text. A number is written as it is stored (an array's
    element) or as its Float64 view, where ``exact`` (the integer that view rounds)
    is NULL: 5 and 5.0 both read "5", and integers beyond 2**53 keep every digit."""
    if kind == "string":
        return f"concat('s', {sql})"
    if kind == "number" and exact is not None:
        return f"concat('n', if(isNull({exact}), toString({sql}), toString({exact})))"
    if kind == "number":
        return f"concat('n', toString({sql}))"
    return f"concat('b', toString({sql}))"


def _bucketed(sql: str, bounds: str) -> str:
    """The bucket of a number among ``bounds`` (ascending): 1 below the first bound, i
    below the i-th, 0 from the last on (``arrayFirstIndex`` finds none); NULL without a
    number (``arrayFirstIndex`` would say 0)."""
    index = f"toString(arrayFirstIndex(x -> {sql} < x, {bounds}))"
    return f"if(isNull({sql}), NULL, concat('{RANGE_TAG}', {index}))"


@dataclass(frozen=True)
class ValueSql:
    """The SQL of a key's values in an event."""

    scalar: str | None  # Nullable(String): the scalar value, tagged; None: never one
    elements: str | None  # Array(Nullable(String)): the array elements, tagged; None: none

    def items(self) -> str:
        """Array(Nullable(String)): the event's distinct values, empty when it has none."""
        if self.elements is None:
            if self.scalar is None:
                return NO_VALUES
            return f"arrayFilter(v -> isNotNull(v), [{self.scalar}])"
        whole = f"arrayConcat([{self.scalar}], {self.elements})" if self.scalar else self.elements
        return f"arrayDistinct(arrayFilter(v -> isNotNull(v), {whole}))"

    def items_or_missing(self) -> str:
        """Like ``items``, with ``[NULL]`` for an event without a value: missing counts as
        a value of its own (BubbleUp compares how often each side lacks the key)."""
        if self.elements is None:
            return f"[{self.scalar}]" if self.scalar else "[CAST(NULL, 'Nullable(String)')]"
        items = self.items()  # written twice, computed once (the engine folds it)
        return f"if(empty({items}), [CAST(NULL, 'Nullable(String)')], {items})"


def value_sql(key: KeyExpr, bounds: str | None = None) -> ValueSql:
    """The key's values; with ``bounds`` (an Array(Float64) parameter) its numbers are
    bucketed among them instead of counted one by one."""
    scalars = []
    for kind, sql in key.scalars.items():
        if kind == "number" and bounds is not None:
            scalars.append(_bucketed(sql, bounds))
        else:
            number = kind == "number"
            value = key.number_value or sql if number else sql
            scalars.append(_tagged(kind, value, key.exact if number else None))
    # A path holds one type in an event: at most one of these is not NULL.
    scalar = None
    if scalars:
        scalar = scalars[0] if len(scalars) == 1 else f"coalesce({', '.join(scalars)})"
    arrays = []
    for kind, reads in key.arrays.items():
        for read in reads:
            if kind == "number" and bounds is not None:
                tagged = _bucketed("toFloat64(e)", bounds)
            else:
                tagged = _tagged(kind, "e")
            arrays.append(f"arrayMap(e -> {tagged}, {read})")
    elements = None
    if arrays:
        elements = arrays[0] if len(arrays) == 1 else f"arrayConcat({', '.join(arrays)})"
    return ValueSql(scalar, elements)


def decode(text: str | None, bounds: list[float] | None = None) -> Any:
    """A tagged value as the API gives it: a string, number, boolean, a number's bucket
    ``{"from", "to"}`` (either None at the open ends), or None for missing."""
    if text is None:
        return None
    tag, body = text[0], text[1:]
    if tag == "s":
        return body
    if tag == "b":
        return body == "true"
    if tag == RANGE_TAG:
        edges = bounds or []
        index = int(body) or len(edges) + 1
        low = edges[index - 2] if index >= 2 else None
        high = edges[index - 1] if index <= len(edges) else None
        return {"from": number(low), "to": number(high)}
    if _INTEGER.fullmatch(body):
        return int(body)
    return number(float(body))


def number(value: float | None) -> Any:
    """A number as the API writes it: whole numbers within 2**53 as integers."""
    if value is None:
        return None
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value
