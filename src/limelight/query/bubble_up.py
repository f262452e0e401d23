"""BubbleUp: what sets a selection of a query's events apart from the rest (the baseline).

Two statements, each one pass over the events:

- ``bounds`` (only when a key holds numbers): over the query's newest
  ``BOUNDS_SAMPLE`` events, each number key's count of distinct values and its
  deciles. A key with few distinct numbers is compared value by value; any
  other is compared by the deciles' ranges (``{"from", "to"}``), where a
  value-by-value count of a duration would find every value rare on both sides.
- ``compare``: both sides in one statement (a UNION ALL of the selection's
  newest events and the baseline's, each read newest first and at most
  ``side_sample`` of them), every event's values of every key joined out as
  (key, value) rows, counted per side with one GROUP BY; a missing key counts as
  a value of its own (null). Per key the ``TOP_VALUES`` values most common on
  either side are returned, with the key's totals per side, so the rest are
  compared as one.

The score of a key is the total variation distance between its two
distributions: half the sum over its values of |selection share - baseline
share| (a share is that of the side's events holding the value; the values past
``TOP_VALUES`` count as one), 0 when both sides look alike, 1 when they share
no value. A key none of whose values reaches ``MIN_SHARE`` (and ``MIN_COUNT``
events) on either side (an id) is left out of the answer. The keys come from the
paths the events hold (``event_paths``, no scan), the system fields ``_dataset``,
``_service`` and ``_namespace`` with them, and never the keys the selection is
defined by (they differ by definition) nor the event's time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from limelight.query.bubble_up_spec import BubbleUpRequest, Region
from limelight.query.keys import SYSTEM_FIELDS, StoredTypes, kinds_of_stored
from limelight.query.plans import CompiledQuery, Timeframe
from limelight.query.scope import Scope
from limelight.query.spec import QueryFields
from limelight.query.sql import Params
from limelight.query.values import decode, value_sql
from limelight.query.where import Where, filter_sql

# The most events read per side. Cost grows with events x keys (one row per event and
# key is counted): see ``side_sample``.
SIDE_SAMPLE = 1_000_000
# Events x (keys + 1) read in one comparison at most: 1M events of 25 keys, 0.9-1.4 s
# on 2 cores (bench/investigate.py), within the 2 s goal.
ROW_BUDGET = 26_000_000
MIN_SIDE_SAMPLE = 10_000
# The most keys compared (by name); more are left out and counted in the answer.
MAX_KEYS = 200
BOUNDS_SAMPLE = 10_000
# A number key with at most this many distinct values (in the bounds' sample) is
# compared value by value (HTTP statuses, small counts); above, by its deciles.
EXACT_NUMBERS = 12
DECILES = "0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9"
TOP_VALUES = 50  # per key, the values most common on either side, compared one by one..
# ..when one side has at least this share of them; rarer values are compared as one: with
# samples of hundreds of events, a near-unique key (a request id) had every value on one
# side alone, and their sum made it the first key (0.24 of 600 events, 188 selected).
MIN_SHARE = 0.01
MIN_COUNT = 5  # ..and at least this many events: a selection of 93 events, 1% is one event
SHOWN_VALUES = 10  # per key, the values in the answer
SYSTEM_KEYS = ("_dataset", "_service", "_namespace")
# The event's time (``_timestamp``, from its ``timestamp``): where events fall in time is
# what the heatmap a selection is drawn on already shows.
LEFT_OUT = frozenset({"timestamp"})
COLUMNS = ("k", "v", "s", "b", "ks", "kb")
NO_VALUE = "CAST(NULL, 'Nullable(String)')"


def candidate_keys(
    paths: Mapping[str, frozenset[str]], left_out: set[str]
) -> tuple[list[str], int]:
    """The keys to compare (system fields first, then paths by name) and how many more
    there were past ``MAX_KEYS``; paths holding no value a key can have (objects only)
    are not keys."""
    keys = [k for k in SYSTEM_KEYS if k not in left_out]
    keys += [
        p
        for p in sorted(paths)
        if p not in left_out and p not in LEFT_OUT and kinds_of_stored(paths[p])
    ]
    return keys[:MAX_KEYS], max(0, len(keys) - MAX_KEYS)


def number_keys(keys: Sequence[str], stored: StoredTypes) -> list[str]:
    """The keys whose numbers may be compared by ranges (system fields hold none)."""
    return [k for k in keys if k not in SYSTEM_FIELDS and "number" in stored.expr(k).scalars]


def side_sample(keys: int) -> int:
    """Events read per side: the row budget over the keys, within its bounds."""
    return max(MIN_SIDE_SAMPLE, min(SIDE_SAMPLE, ROW_BUDGET // (keys + 1)))


def _query_where(scope: Scope, fields: QueryFields, stored: StoredTypes) -> Where:
    return Where(scope, fields, stored)


def compile_bounds(
    scope: Scope,
    table: str,
    fields: QueryFields,
    timeframe: Timeframe,
    stored: StoredTypes,
    keys: Sequence[str],
) -> CompiledQuery:
    """Per number key (``u0``, ``q0``..): its distinct numbers and deciles, over the
    query's newest ``BOUNDS_SAMPLE`` events."""
    params = Params()
    where = _query_where(scope, fields, stored)
    columns = ", ".join(f"{stored.expr(k).scalars['number']} AS n{i}" for i, k in enumerate(keys))
    inner = scope.select(
        columns,
        table,
        where.render(params, timeframe),
        f" ORDER BY timestamp DESC LIMIT {params.add(BOUNDS_SAMPLE, 'UInt32')}",
        inner=True,
    )
    stats = ", ".join(
        f"uniq(n{i}) AS u{i}, quantilesExactInclusive({DECILES})(n{i}) AS q{i}"
        for i in range(len(keys))
    )
    names = tuple(name for i in range(len(keys)) for name in (f"u{i}", f"q{i}"))
    return CompiledQuery(
        f"SELECT {stats} FROM ({inner}) LIMIT 1" + scope.settings(), params.values, names
    )


def bounds_of(keys: Sequence[str], row: Mapping[str, Any] | None) -> dict[str, list[float]]:
    """The keys compared by ranges, with their bounds (distinct deciles, ascending)."""
    out: dict[str, list[float]] = {}
    for i, key in enumerate(keys):
        if row is None or int(row[f"u{i}"]) <= EXACT_NUMBERS:
            continue
        deciles = sorted({float(q) for q in row[f"q{i}"] if q is not None})
        if deciles:
            out[key] = deciles
    return out


def _selection_sql(request: BubbleUpRequest, params: Params, stored: StoredTypes) -> str:
    selection = request.selection
    if isinstance(selection, Region):
        number = stored.expr(selection.key).scalars.get("number")
        parts = [
            f"timestamp >= fromUnixTimestamp64Milli({params.add(selection.from_ms, 'Int64')})",
            f"timestamp < fromUnixTimestamp64Milli({params.add(selection.to_ms, 'Int64')})",
        ]
        if number is None:
            parts.append("0")  # the key never holds a number: nothing is selected
        else:
            parts.append(f"{number} >= {params.add(selection.low, 'Float64')}")
            parts.append(f"{number} <= {params.add(selection.high, 'Float64')}")
        return "(" + " AND ".join(parts) + ")"
    tests = [filter_sql(f, params, stored) for f in selection.filters or []]
    joiner = " OR " if selection.filter_combination == "OR" else " AND "
    return "(" + joiner.join(tests) + ")"


@dataclass(frozen=True)
class BubbleUpPlan:
    keys: tuple[str, ...]  # key index i + 1 in the rows (0: the sides' totals)
    bounds: Mapping[str, list[float]]
    statement: CompiledQuery
    side_sample: int
    keys_left_out: int


def compile_bubble_up(
    scope: Scope,
    table: str,
    request: BubbleUpRequest,
    stored: StoredTypes,
    keys: Sequence[str],
    bounds: Mapping[str, list[float]],
    keys_left_out: int = 0,
) -> BubbleUpPlan:
    """``stored`` holds the types of ``keys`` and of the query's and selection's keys."""
    where = _query_where(scope, request.fields, stored)
    timeframe = Timeframe(request.from_ms, request.to_ms)
    sample = side_sample(len(keys))
    params = Params()
    pairs = [f"[(0, {NO_VALUE})]"]  # every event: the sides' totals
    for i, key in enumerate(keys, start=1):
        edges = params.add(bounds[key], "Array(Float64)") if key in bounds else None
        values = value_sql(stored.expr(key), edges)
        if values.elements is None:  # one value or none: no lambda to run per event
            pairs.append(f"[({i}, {values.scalar or NO_VALUE})]")
        else:
            pairs.append(f"arrayMap(v -> ({i}, v), {values.items_or_missing()})")
    kvs = f"arrayConcat({', '.join(pairs)}) AS kvs"
    sides = []
    for side in (1, 0):
        cond = where.render(params, timeframe)
        selected = _selection_sql(request, params, stored)
        test = selected if side else f"NOT ifNull({selected}, 0)"
        limit = params.add(sample, "UInt32")
        tail = f" AND {test} ORDER BY timestamp DESC LIMIT {limit}"
        sides.append(f"({scope.select(f'{side} AS sel, {kvs}', table, cond, tail, inner=True)})")
    counted = (
        "SELECT kv.1 AS k, kv.2 AS v, countIf(sel = 1) AS s, countIf(sel = 0) AS b"
        f" FROM ({' UNION ALL '.join(sides)}) ARRAY JOIN kvs AS kv GROUP BY k, v"
    )
    shares = (
        "SELECT k, v, s, b, sum(s) OVER (PARTITION BY k) AS ks, sum(b) OVER (PARTITION BY k) AS kb,"
        " sumIf(s, k = 0) OVER () AS sides_s, sumIf(b, k = 0) OVER () AS sides_b"
        f" FROM ({counted})"
    )
    top = params.add(TOP_VALUES, "UInt32")
    sql = (
        f"SELECT k, v, s, b, ks, kb FROM ({shares})"
        " ORDER BY k, s / greatest(sides_s, 1) + b / greatest(sides_b, 1) DESC, v ASC"
        f" LIMIT {top} BY k LIMIT {params.add((len(keys) + 1) * TOP_VALUES, 'UInt32')}"
    )
    return BubbleUpPlan(
        keys=tuple(keys),
        bounds=dict(bounds),
        statement=CompiledQuery(sql + scope.settings(), params.values, COLUMNS),
        side_sample=sample,
        keys_left_out=keys_left_out,
    )


def total_variation(counts: Sequence[tuple[int, int]], sides: tuple[int, int]) -> float:
    """Half the sum of |selection share - baseline share| over the values' counts."""
    selection, baseline = max(sides[0], 1), max(sides[1], 1)
    return sum(abs(s / selection - b / baseline) for s, b in counts) / 2


def bubble_up_answer(plan: BubbleUpPlan, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    by_key: dict[int, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_key.setdefault(int(row["k"]), []).append(row)
    totals = by_key.pop(0, [{"s": 0, "b": 0}])[0]
    sides = (int(totals["s"]), int(totals["b"]))
    dimensions = [
        dimension
        for index, found in by_key.items()
        if (dimension := _dimension(plan, plan.keys[index - 1], found, sides)) is not None
    ]
    dimensions.sort(key=lambda d: (-float(d["score"]), str(d["key"])))
    return {
        "selection": sides[0],
        "baseline": sides[1],
        "sampled": max(sides) >= plan.side_sample,
        "keys_left_out": plan.keys_left_out,
        "dimensions": dimensions,
    }


def _dimension(
    plan: BubbleUpPlan, key: str, found: Sequence[Mapping[str, Any]], sides: tuple[int, int]
) -> dict[str, Any] | None:
    """One key's score and values; None when no event of either side holds a value of it
    that is common enough to compare (a near-unique key: ids, messages)."""
    selection, baseline = max(sides[0], 1), max(sides[1], 1)
    kept = [
        r
        for r in found
        if max(int(r["s"]) / selection, int(r["b"]) / baseline) >= MIN_SHARE
        and max(int(r["s"]), int(r["b"])) >= MIN_COUNT
    ]
    if all(r["v"] is None for r in kept):
        return None
    counts = [(int(r["s"]), int(r["b"])) for r in kept]
    rest = (
        int(found[0]["ks"]) - sum(s for s, _ in counts),
        int(found[0]["kb"]) - sum(b for _, b in counts),
    )
    values = [
        {
            "value": decode(r["v"], plan.bounds.get(key)),
            "selection": int(r["s"]) / selection,
            "baseline": int(r["b"]) / baseline,
        }
        for r in kept[:SHOWN_VALUES]
    ]
    score = total_variation([*counts, rest], sides)
    return {"key": key, "score": round(score, 6), "values": values}
