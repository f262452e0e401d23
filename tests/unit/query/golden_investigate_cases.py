"""The golden cases of the investigation statements: field values, BubbleUp and its bounds.

Each case is compiled with a fixed tenant and timeframe and pinned in
``golden/investigate/<name>.sql``; tests/integration/test_golden_investigate_on_chdb.py
runs every case on chDB over the generated events and compares the answer with
``tests.investigate_reference``.
"""

from __future__ import annotations

from typing import Any

from limelight.query.bubble_up import (
    BubbleUpPlan,
    compile_bubble_up,
    compile_profile,
    compile_sides,
    sides_of,
)
from limelight.query.bubble_up_sample import SIDE_SAMPLE, TIME_LEVELS, Sides
from limelight.query.bubble_up_spec import BubbleUpRequest, validate_bubble_up
from limelight.query.field_values import (
    SAMPLE_EVENTS,
    FieldValuesPlan,
    compile_field_values,
)
from limelight.query.keys import StoredTypes
from limelight.query.plans import CompiledQuery, RunOptions
from limelight.query.scope import Scope
from limelight.query.spec import validate_fields
from tests.unit.query.golden_cases import TABLE, TIMEFRAME

WORKSPACE = "ws_golden"
# Not golden_cases' environment: both suites store their events in one engine.
ENVIRONMENT = "env_golden_investigate"
SCOPE = Scope(WORKSPACE, ENVIRONMENT, RunOptions())

# The types the generated events (tests.query_reference.generate_events) hold: the chDB
# test checks them against the engine's record, since a type left out is events missed.
STORED = StoredTypes(
    {
        "duration": frozenset({"Int64", "Float64", "String"}),
        "status": frozenset({"Int64", "String", "Bool"}),
        "tags": frozenset(
            {"String", "Array(Nullable(String))", "Array(Nullable(Int64))", "Array(Dynamic)"}
        ),
        "http.method": frozenset({"String"}),
        "ok": frozenset({"Bool"}),
        "ratio": frozenset({"Float64", "Int64"}),
    }
)
BUBBLE_KEYS = [
    "_dataset",
    "_service",
    "_namespace",
    "duration",
    "http.method",
    "ok",
    "ratio",
    "tags",
]

# name -> (key, filters, limit, sample)
FIELD_VALUES: dict[str, tuple[str, list[dict[str, Any]], int, int]] = {
    "values_string": ("http.method", [], 10, SAMPLE_EVENTS),
    "values_mixed_kinds": ("status", [], 10, SAMPLE_EVENTS),
    "values_array_filtered": (
        "tags",
        [{"key": "duration", "operation": ">", "value": 100}],
        10,
        SAMPLE_EVENTS,
    ),
    "values_system_field": ("_service", [], 3, SAMPLE_EVENTS),
    "values_absent_key": ("nowhere", [], 10, SAMPLE_EVENTS),
    "values_sampled": ("status", [], 10, 50),
}

_FROM, _TO = TIMEFRAME.from_ms, TIMEFRAME.to_ms
_HALF = _FROM + (_TO - _FROM) // 2
# name -> (body, bounds of number keys, events of each side: None unknown)
BUBBLE_UP: dict[str, tuple[dict[str, Any], dict[str, list[float]], tuple[int, int] | None]] = {
    "bubble_filters": (
        {
            "namespaces": [{"type": "dataset", "value": "golden-a"}],
            "from": _FROM,
            "to": _TO,
            "selection": {"filters": [{"key": "status", "operation": "=", "value": 500}]},
        },
        {"duration": [10.0, 100.0, 1000.0]},
        None,
    ),
    "bubble_region": (
        {
            "filters": [{"key": "ok", "operation": "EXISTS"}],
            "needle": {"value": "alpha"},
            "from": _FROM,
            "to": _TO,
            "selection": {"from": _HALF, "to": _TO, "key": "duration", "min": 100, "max": 2000},
        },
        {},
        (20, 80),  # both sides fit their samples: read whole
    ),
    # A regex looked up in the phrases index's dictionary (query.needle).
    "bubble_regex": (
        {
            "namespaces": [{"type": "dataset", "value": "golden-a"}],
            "needle": {"value": "(alpha|gamma) [a-z_]+", "isRegex": True},
            "from": _FROM,
            "to": _TO,
            "selection": {"filters": [{"key": "status", "operation": "=", "value": 500}]},
        },
        {"duration": [10.0, 100.0, 1000.0]},
        None,
    ),
    # The baseline holds twice its sample: it is read in windows of half the time.
    "bubble_sampled": (
        {
            "from": _FROM,
            "to": _TO,
            "selection": {"filters": [{"key": "status", "operation": "=", "value": 500}]},
        },
        {"duration": [10.0, 100.0, 1000.0]},
        (20, 2 * SIDE_SAMPLE),
    ),
}


def field_values_plan(name: str) -> FieldValuesPlan:
    key, filters, limit, sample = FIELD_VALUES[name]
    parsed = validate_fields({"filters": filters}).filters or []
    return compile_field_values(
        SCOPE, TABLE, "golden-a", key, parsed, TIMEFRAME, STORED, limit, sample, dictionaries=TABLE
    )


def bubble_up_request(name: str) -> BubbleUpRequest:
    import json

    return validate_bubble_up(json.dumps(BUBBLE_UP[name][0]).encode())


def bubble_up_sides(counts: tuple[int, int]) -> Sides:
    """Sides of ``counts`` events, each spread evenly over the timeframe."""
    span = _TO - _FROM
    levels = [_FROM + i * span / TIME_LEVELS for i in range(1, TIME_LEVELS)]
    row = {"s": counts[0], "b": counts[1], "st": levels, "bt": levels, "qt": levels}
    row.update({f"{side}0": _FROM for side in "sbq"} | {f"{side}1": _TO - 1 for side in "sbq"})
    return sides_of(row)


def bubble_up_plan(name: str) -> BubbleUpPlan:
    request = bubble_up_request(name)
    keys = [k for k in BUBBLE_KEYS if k not in request.selection_keys()]
    _, bounds, counts = BUBBLE_UP[name]
    if counts is None:
        return compile_bubble_up(SCOPE, TABLE, request, STORED, keys, bounds, dictionaries=TABLE)
    sides = bubble_up_sides(counts)
    return compile_bubble_up(
        SCOPE, TABLE, request, STORED, keys, bounds, sides=sides, dictionaries=TABLE
    )


PROFILE_NUMBERS = ["duration", "ratio"]


def profile_statement(sampled: bool = False) -> CompiledQuery:
    """The profile of ``bubble_filters``'s events; ``sampled``: within the windows of
    ``bubble_sampled``'s query."""
    fields = bubble_up_request("bubble_filters").fields
    windows = bubble_up_sides(BUBBLE_UP["bubble_sampled"][2] or (0, 0)).query if sampled else None
    return compile_profile(
        SCOPE, TABLE, fields, TIMEFRAME, STORED, PROFILE_NUMBERS, windows, dictionaries=TABLE
    )


def sides_statement() -> CompiledQuery:
    return compile_sides(
        SCOPE, TABLE, bubble_up_request("bubble_filters"), STORED, dictionaries=TABLE
    )


def statements() -> dict[str, CompiledQuery]:
    """Every case's statement, by the case's name."""
    out = {name: field_values_plan(name).statement for name in FIELD_VALUES}
    # A timeframe the sample holds whole: the same read in no order, after the count.
    out["values_array_filtered_whole"] = field_values_plan("values_array_filtered").whole
    out["values_events"] = field_values_plan("values_array_filtered").events
    out.update({name: bubble_up_plan(name).statement for name in BUBBLE_UP})
    out["bubble_profile"] = profile_statement()
    out["bubble_profile_sampled"] = profile_statement(sampled=True)
    out["bubble_sides"] = sides_statement()
    return out
