"""How a query key becomes SQL: system fields map to typed columns, others to JSON paths.

A key is seen through its *kind* (string, number, boolean): each kind has its
own expression, NULL for events where the key holds something else or is
missing. That keeps comparisons typed, so a path holding both numbers and
strings never raises NO_COMMON_TYPE, and a missing key never matches.

A kind is read from the types ClickHouse stores a JSON path as (a number is
Int64, UInt64 above Int64's range, or Float64). Reading a type no event holds
still costs a pass over the path's data (about 0.1 s per type over 10M
events), so when the caller knows which types each path holds in the tenant's
events (``StoredTypes``, kept by the events store as events arrive), only
those are read; a path no event holds is read as nothing at all.

A key holding an object has no value of its own in the JSON column: the
object is stored as the paths below it (``error.message``, ``error.stack``).
So a key is present when its path holds a value or any path below it does;
an empty object, or one holding only nulls, leaves no path and is missing.
The paths below a key are tested one by one when the caller knows them
(``StoredTypes.below``, up to MAX_LISTED_SUB_PATHS), else the object is read
whole (``data.^error``), which costs more: see ``_presence``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from limelight.query.sql import json_path, json_sub_object, typed_subcolumn

Kind = Literal["string", "number", "boolean"]
KINDS: tuple[Kind, ...] = ("string", "number", "boolean")

# System fields: what the event gains when stored, held in typed columns.
SYSTEM_FIELDS: Mapping[str, tuple[str, Kind]] = {
    "_timestamp": ("toUnixTimestamp64Milli(timestamp)", "number"),
    "_dataset": ("dataset", "string"),
    "_service": ("service", "string"),
    "_namespace": ("namespace", "string"),
    "_id": ("id", "string"),
}

# The stored types of each kind's scalars.
SCALAR_TYPES: Mapping[Kind, tuple[str, ...]] = {
    "string": ("String",),
    "number": ("Int64", "Float64", "UInt64"),
    "boolean": ("Bool",),
}
# An array of one element type is stored typed; an array mixing kinds is
# Array(Dynamic), whose elements are read per type, and so may be other arrays of its
# path parsed in the same chunk of an insert's text (the engine types a path's arrays
# per chunk, store.events.base.PARSE_CHUNK_BYTES): a path may hold both.
DYNAMIC_ARRAY = "Array(Dynamic)"
ARRAY_TYPES: Mapping[Kind, tuple[str, ...]] = {
    kind: tuple(f"Array(Nullable({t}))" for t in types) for kind, types in SCALAR_TYPES.items()
}


# Beyond this many paths below a key, its presence is read from the object whole. Listed
# paths cost less even past the JSON column's own 256 (200k events, 5 of N keys below
# `attributes` each: N = 40, 150, 400 took 0.087, 0.165, 0.530 s listed against 0.210,
# 0.354, 0.751 s whole); the limit keeps the statement's text well within the engine's.
MAX_LISTED_SUB_PATHS = 500

# The kinds a key is described with (GET /v1/datasets/<name>/keys, the console).
KEY_KINDS = ("string", "number", "boolean", "array")


def kinds_of_stored(types: frozenset[str]) -> list[str]:
    """The kinds of the values a path is stored as, in ``KEY_KINDS`` order: an array of
    any elements (mixed, nested, of objects) is an array."""
    found = {"array" for t in types if t.startswith("Array(")}
    found |= {kind for kind, held in SCALAR_TYPES.items() if types & set(held)}
    return [kind for kind in KEY_KINDS if kind in found]


@dataclass(frozen=True)
class KeyExpr:
    """The SQL views of one key."""

    key: str
    exists: str  # present: a value of its own, or an object holding one (see the module)
    scalars: Mapping[Kind, str] = field(default_factory=dict)  # missing kind: never holds it
    arrays: Mapping[Kind, tuple[str, ...]] = field(default_factory=dict)
    is_system: bool = False
    # The number as each type it is stored as (Int64, Float64, UInt64), for comparisons
    # with an integer the Float64 view would round; empty for a system field.
    numbers: tuple[str, ...] = ()
    # For a key stored as more than one number type, one an integer type: Nullable(Int128),
    # the integer where the Float64 view rounds it (beyond 2**53, snowflake ids), else
    # NULL. Beside that view it keeps such integers apart in groups and distinct counts.
    exact: str | None = None

    @property
    def number_value(self) -> str | None:
        """The number as grouped, counted apart and listed: as stored where the key holds
        one number type (exact, and cheaper than a conversion: a GROUP BY of an Int64
        key over 1M events 51 ms through the Float64 view, 77 with ``exact`` beside
        it), else the Float64 view (with ``exact``)."""
        return self.numbers[0] if len(self.numbers) == 1 else self.scalars.get("number")


@dataclass(frozen=True)
class StoredTypes:
    """The types each JSON path holds in the events a run reads, when known.

    ``paths`` None: unknown, every type is read. Otherwise a path it lacks holds
    no value in those events. Types are ClickHouse's names (``String``,
    ``Array(Nullable(Int64))``, ..).
    """

    paths: Mapping[str, frozenset[str]] | None = None
    # Per key looked up for it: the paths below it that the events hold, with their
    # types; None when there are more than MAX_LISTED_SUB_PATHS. A key not in it: unknown.
    below: Mapping[str, Mapping[str, frozenset[str]] | None] = field(default_factory=dict)

    def of(self, key: str) -> frozenset[str] | None:
        return None if self.paths is None else self.paths.get(key, frozenset())

    def below_of(self, key: str) -> Mapping[str, frozenset[str]] | None:
        return self.below.get(key)

    def expr(self, key: str) -> KeyExpr:
        return key_expr(key, self.of(key), self.below_of(key))


UNKNOWN = StoredTypes()


# The first integer a double does not hold alone: from here on it equals a neighbour.
FLOAT_EXACT_LIMIT = 2**53


def _number(path: str, types: tuple[str, ...]) -> str:
    parts = [
        typed_subcolumn(path, t) if t == "Float64" else f"toFloat64({typed_subcolumn(path, t)})"
        for t in types
    ]
    return parts[0] if len(parts) == 1 else "coalesce(" + ", ".join(parts) + ")"


def _exact(path: str, types: tuple[str, ...]) -> str | None:
    # Every integer from 2^53 on, where a double no longer holds each integer: one that
    # a double happens to hold (2^60) printed from the Float64 view loses its digits
    # (1152921504606847000), and a filter on what was printed finds nothing. Below, the
    # Float64 view is exact. One type alone is read as it is (``number_value``).
    if len(types) < 2:
        return None
    integers = [typed_subcolumn(path, t) for t in types if t != "Float64"]
    parts = [f"if(abs(toInt128({i})) < {FLOAT_EXACT_LIMIT}, NULL, toInt128({i}))" for i in integers]
    return parts[0] if len(parts) == 1 else "coalesce(" + ", ".join(parts) + ")"


def _arrays(path: str, kind: Kind, held: frozenset[str] | None) -> tuple[str, ...]:
    typed = [typed_subcolumn(path, t) for t in ARRAY_TYPES[kind] if held is None or t in held]
    if held is None or DYNAMIC_ARRAY in held:
        dynamic = typed_subcolumn(path, DYNAMIC_ARRAY)
        typed += [f"{dynamic}.{t}" for t in SCALAR_TYPES[kind]]
    return tuple(typed)


_SCALAR_TYPE_NAMES = frozenset(t for types in SCALAR_TYPES.values() for t in types)


def _presence(
    key: str, path: str, held: frozenset[str] | None, below: Mapping[str, frozenset[str]] | None
) -> str:
    """SQL true when the key holds a value of its own or an object holding one.

    A listed path below is tested by the null map of each scalar type it holds,
    which reads one byte per event instead of the values: over 1M events with
    three paths below ``error``, 0.024 s against 0.031 s for ``isNotNull`` of
    each and 0.049 s for the object whole (``notEmpty(JSONAllPaths(data.^error))``);
    ``isNotNull(data.error)`` alone, which misses the objects, took 0.019 s.
    """
    tests = [] if held == frozenset() else [f"isNotNull({path})"]
    if below is None:
        tests.append(f"notEmpty(JSONAllPaths({json_sub_object('data', key)}))")
    else:
        for sub, types in sorted(below.items()):
            sub_path = json_path("data", sub)
            scalars = sorted(types & _SCALAR_TYPE_NAMES)
            tests += [f"NOT {typed_subcolumn(sub_path, t)}.null" for t in scalars]
            if types - _SCALAR_TYPE_NAMES:  # arrays: no null map of their own
                tests.append(f"isNotNull({sub_path})")
    if not tests:
        return "0"
    return tests[0] if len(tests) == 1 else "(" + " OR ".join(tests) + ")"


def key_expr(
    key: str,
    held: frozenset[str] | None = None,
    below: Mapping[str, frozenset[str]] | None = None,
) -> KeyExpr:
    """The key's views; ``held``: the types its path is stored as, ``below``: the paths
    below it with theirs (None: unknown, or too many to list)."""
    if key in SYSTEM_FIELDS:
        column, kind = SYSTEM_FIELDS[key]
        return KeyExpr(key, exists="1", scalars={kind: column}, is_system=True)
    path = json_path("data", key)
    scalars: dict[Kind, str] = {}
    arrays: dict[Kind, tuple[str, ...]] = {}
    numbers: tuple[str, ...] = ()
    exact = None
    for kind, types in SCALAR_TYPES.items():
        present = tuple(t for t in types if held is None or t in held)
        if present and kind == "number":
            scalars[kind] = _number(path, present)
            numbers = tuple(typed_subcolumn(path, t) for t in present)
            exact = _exact(path, present)
        elif present:
            scalars[kind] = typed_subcolumn(path, present[0])
        if reads := _arrays(path, kind, held):
            arrays[kind] = reads
    presence = _presence(key, path, held, below)
    return KeyExpr(key, presence, scalars, arrays, numbers=numbers, exact=exact)


def valid_key(key: str) -> str | None:
    """Why a key name cannot be used, or None."""
    if not key:
        return "must not be empty"
    if any(part == "" for part in key.split(".")):
        return "must not start or end with a dot or hold two dots in a row"
    return None
