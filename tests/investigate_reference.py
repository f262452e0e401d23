"""Field values and BubbleUp's counts, the slow obvious way over in-memory events.

A key's values in an event are its scalar, or the distinct elements of its
array (nested arrays and objects are no values); numbers are one kind (5 and
5.0), booleans are not numbers, "5" is not 5. Shares no code with
``limelight.query``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from tests import query_reference as ref


def canon(value: Any) -> tuple[str, Any]:
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, int | float):
        return ("number", value)  # exact: 5 == 5.0 in Python, 2**53 + 1 != 2**53 + 1.0
    return ("string", value)


def values_of(record: ref.Record, key: str) -> set[tuple[str, Any]]:
    value = ref.get(record, key)
    items = value if isinstance(value, list) else [value]
    return {canon(v) for v in items if v is not None and not isinstance(v, dict | list)}


def top_values(
    records: list[ref.Record], query: Mapping[str, Any], key: str, frm: int, to: int
) -> tuple[Counter[tuple[str, Any]], int]:
    """Per value, the events of the query holding it; and the events holding the key."""
    counts: Counter[tuple[str, Any]] = Counter()
    events = 0
    for record in ref.select(records, query, frm, to):
        found = values_of(record, key)
        if found:
            events += 1
            counts.update(found)
    return counts, events


def sides(
    records: list[ref.Record],
    query: Mapping[str, Any],
    selection: Mapping[str, Any],
    frm: int,
    to: int,
) -> tuple[list[ref.Record], list[ref.Record]]:
    """The query's events in the selection (given as a query's filters), and the rest."""
    matching = ref.select(records, query, frm, to)
    chosen = {id(r) for r in ref.select(matching, selection, frm, to)}
    return [r for r in matching if id(r) in chosen], [r for r in matching if id(r) not in chosen]


def share(side: list[ref.Record], key: str, value: Any) -> float:
    """The share of ``side`` holding ``value`` (None: lacking the key; a ``{"from", "to"}``
    range: holding a number within it)."""

    def holds(record: ref.Record) -> bool:
        found = values_of(record, key)
        if value is None:
            return not found
        if isinstance(value, dict):
            low, high = value["from"], value["to"]
            return any(
                kind == "number" and (low is None or n >= low) and (high is None or n < high)
                for kind, n in found
            )
        return canon(value) in found

    return sum(holds(r) for r in side) / len(side) if side else 0.0
