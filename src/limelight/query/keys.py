"""How a query key becomes SQL: system fields map to typed columns, others to JSON paths.

A key is seen through its *kind* (string, number, boolean): each kind has its
own expression, NULL for events where the key holds something else or is
missing. That keeps comparisons typed, so a path holding both numbers and
strings never raises NO_COMMON_TYPE, and a missing key never matches.
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

# JSON numbers are stored as Int64, UInt64 (above Int64) or Float64; read all three as Float64.
_NUMBER_TYPES = ("Int64", "Float64", "UInt64")
_ARRAY_TYPES: Mapping[Kind, tuple[str, ...]] = {
    "string": ("Array(Nullable(String))",),
    "number": ("Array(Nullable(Int64))", "Array(Nullable(Float64))"),
    "boolean": ("Array(Nullable(Bool))",),
}


@dataclass(frozen=True)
class KeyExpr:
    """The SQL views of one key."""

    key: str
    value: str  # the value whatever its type: groups and COUNT_DISTINCT
    exists: str  # present and not null
    scalars: Mapping[Kind, str] = field(default_factory=dict)  # missing kind: never holds it
    arrays: Mapping[Kind, tuple[str, ...]] = field(default_factory=dict)
    is_system: bool = False


def _number(path: str) -> str:
    parts = [
        typed_subcolumn(path, t) if t == "Float64" else f"toFloat64({typed_subcolumn(path, t)})"
        for t in _NUMBER_TYPES
    ]
    return "coalesce(" + ", ".join(parts) + ")"


def key_expr(key: str) -> KeyExpr:
    if key in SYSTEM_FIELDS:
        column, kind = SYSTEM_FIELDS[key]
        return KeyExpr(key, value=column, exists="1", scalars={kind: column}, is_system=True)
    path = json_path("data", key)
    return KeyExpr(
        key,
        value=path,
        exists=f"isNotNull({path})",
        scalars={
            "string": typed_subcolumn(path, "String"),
            "number": _number(path),
            "boolean": typed_subcolumn(path, "Bool"),
        },
        arrays={k: tuple(typed_subcolumn(path, t) for t in ts) for k, ts in _ARRAY_TYPES.items()},
    )


def valid_key(key: str) -> str | None:
    """Why a key name cannot be used, or None."""
    if not key:
        return "must not be empty"
    if any(part == "" for part in key.split(".")):
        return "must not start or end with a dot or hold two dots in a row"
    return None
