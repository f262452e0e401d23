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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from limelight.query.sql import json_path, typed_subcolumn

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
# An array of one element type is stored typed; an array mixing kinds (and, when
# one event's array mixes kinds, every array of that path in the same insert) is
# Array(Dynamic), whose elements are read per type.
DYNAMIC_ARRAY = "Array(Dynamic)"
ARRAY_TYPES: Mapping[Kind, tuple[str, ...]] = {
    kind: tuple(f"Array(Nullable({t}))" for t in types) for kind, types in SCALAR_TYPES.items()
}


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
    exists: str  # present and not null
    scalars: Mapping[Kind, str] = field(default_factory=dict)  # missing kind: never holds it
    arrays: Mapping[Kind, tuple[str, ...]] = field(default_factory=dict)
    is_system: bool = False


@dataclass(frozen=True)
class StoredTypes:
    """The types each JSON path holds in the events a run reads, when known.

    ``paths`` None: unknown, every type is read. Otherwise a path it lacks holds
    no value in those events. Types are ClickHouse's names (``String``,
    ``Array(Nullable(Int64))``, ..).
    """

    paths: Mapping[str, frozenset[str]] | None = None

    def of(self, key: str) -> frozenset[str] | None:
        return None if self.paths is None else self.paths.get(key, frozenset())

    def expr(self, key: str) -> KeyExpr:
        return key_expr(key, self.of(key))


UNKNOWN = StoredTypes()


def _number(path: str, types: tuple[str, ...]) -> str:
    parts = [
        typed_subcolumn(path, t) if t == "Float64" else f"toFloat64({typed_subcolumn(path, t)})"
        for t in types
    ]
    return parts[0] if len(parts) == 1 else "coalesce(" + ", ".join(parts) + ")"


def _arrays(path: str, kind: Kind, held: frozenset[str] | None) -> tuple[str, ...]:
    typed = [typed_subcolumn(path, t) for t in ARRAY_TYPES[kind] if held is None or t in held]
    if held is None or DYNAMIC_ARRAY in held:
        dynamic = typed_subcolumn(path, DYNAMIC_ARRAY)
        typed += [f"{dynamic}.{t}" for t in SCALAR_TYPES[kind]]
    return tuple(typed)


def key_expr(key: str, held: frozenset[str] | None = None) -> KeyExpr:
    """The key's views; ``held``: the types its path is stored as (None: unknown)."""
    if key in SYSTEM_FIELDS:
        column, kind = SYSTEM_FIELDS[key]
        return KeyExpr(key, exists="1", scalars={kind: column}, is_system=True)
    path = json_path("data", key)
    scalars: dict[Kind, str] = {}
    arrays: dict[Kind, tuple[str, ...]] = {}
    for kind, types in SCALAR_TYPES.items():
        present = tuple(t for t in types if held is None or t in held)
        if present:
            scalars[kind] = (
                _number(path, present) if kind == "number" else typed_subcolumn(path, present[0])
            )
        if reads := _arrays(path, kind, held):
            arrays[kind] = reads
    return KeyExpr(
        key,
        exists="0" if held == frozenset() else f"isNotNull({path})",
        scalars=scalars,
        arrays=arrays,
    )


def valid_key(key: str) -> str | None:
    """Why a key name cannot be used, or None."""
    if not key:
        return "must not be empty"
    if any(part == "" for part in key.split(".")):
        return "must not start or end with a dot or hold two dots in a row"
    return None
