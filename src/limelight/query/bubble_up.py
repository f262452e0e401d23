"""BubbleUp: what sets a selection of a query's events apart from the rest (the baseline).

Three statements over the events, after the lookups of the keys (the paths the
events hold, ``event_paths``: no scan):

- ``sides``: how many events of the query each side holds, and how they spread
  in time (``bubble_up_sample.Spread``): a pass over the columns of the query and
  the selection alone. A side of more than ``SIDE_SAMPLE`` events is sampled:
  ``sample_windows`` places ``SAMPLE_WINDOWS`` windows of time evenly over its
  events (by rank, not by time), which together hold about ``SIDE_SAMPLE`` of them.
- ``profile``: over such windows of the query's events (``PROFILE_SAMPLE``), each
  number key's distinct numbers and deciles. A key with few distinct numbers is
  compared value by value; any other number key by the deciles' ranges
  (``{"from", "to"}``), where a value-by-value count of a duration would find
  every value rare on both sides.
- ``compare``: both sides in one read of the events (each side within its
  windows when sampled), every event's values of every key joined out as
  (key, value) rows, counted per side with one GROUP BY; a missing key counts as
  a value of its own (null). Per key the ``TOP_VALUES`` values most common on
  either side are returned, with the key's totals per side, so the rest are
  compared as one, and its number of distinct values, so that a key with a value
  of its own in nearly every event (an id) is left out (``near_unique``).

Why windows of time rather than a hash of the event id: the work is reading the
keys' columns, and the engine reads a granule (thousands of events) whole or not
at all. A hash sample holds events of every granule, so it read about as much as
no sample (1M spans of 33 keys: 1.5 CPU-seconds for 1,000 events a side, 1.9 for
50,000); windows read only the granules they span, which the primary key (time)
finds (0.45 for 5,000 a side in 10 windows). Both sides are read in one pass,
so a granule both need is read once. The windows are a function of the events
alone, so the same events give the same answer.

The score of a key is the total variation distance between its two
distributions: half the sum over its values of |selection share - baseline
share| (a share is that of the side's events read holding the value; the values
past ``TOP_VALUES`` count as one), 0 when both sides look alike, 1 when they
share no value. A key none of whose values reaches ``MIN_SHARE`` (and
``least_count`` events) on either side (an id) is left out of the answer. The
system fields ``_dataset``, ``_service`` and ``_namespace`` are keys too; never
the keys the selection is defined by (they differ by definition) nor the
event's time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from limelight.query.bubble_up_sample import (
    Sides,
    Spread,
    Window,
    sample_windows,
    time_levels,
    windows_sql,
)
from limelight.query.bubble_up_spec import BubbleUpRequest, Region
from limelight.query.keys import SYSTEM_FIELDS, StoredTypes, kinds_of_stored
from limelight.query.plans import CompiledQuery, Timeframe
from limelight.query.scope import Scope
from limelight.query.spec import QueryFields
from limelight.query.sql import Params
from limelight.query.values import decode, value_sql
from limelight.query.where import Where, filter_sql

# The most keys compared (by name); more are left out and counted in the answer.
MAX_KEYS = 200
# The query's events the deciles of its numbers are taken over (in windows, as a side's).
PROFILE_SAMPLE = 10_000
# A key with a distinct value in more than this share of the events read holding it
# (ids: requestId, spanId) is left out: none of its values can be common on either side.
# HyperDX leaves out keys 90% unique alike.
NEAR_UNIQUE = 0.9
NEAR_UNIQUE_EVENTS = 100
# A number key with at most this many distinct values (in the profile) is
# compared value by value (HTTP statuses, small counts); above, by its deciles.
EXACT_NUMBERS = 12
DECILES = "0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9"
TOP_VALUES = 50  # per key, the values most common on either side, compared one by one..
# ..when one side has at least this share of them; rarer values are compared as one: with
# samples of hundreds of events, a near-unique key (a request id) had every value on one
# side alone, and their sum made it the first key (0.24 of 600 events, 188 selected).
MIN_SHARE = 0.01
# ..and at least this many of the side's events (a selection of 93 events, 1% is one
# event); for a key of at most TOP_VALUES values (a status, a region), of a side of under
# 50 events a tenth of them, two at least: a status held by 4 of a 14-event selection sets
# it apart, and was summed with the rest. Not for a key of more values: the trace ids of
# an 11-event selection, two events each, ranked above its region.
MIN_COUNT = 5


SHOWN_VALUES = 10  # per key, the values in the answer
SYSTEM_KEYS = ("_dataset", "_service", "_namespace")
# The event's time (``_timestamp``, from its ``timestamp``): where events fall in time is
# what the heatmap a selection is drawn on already shows.
LEFT_OUT = frozenset({"timestamp"})
COLUMNS = ("k", "v", "s", "b", "ks", "kb", "kd", "kn")
NO_VALUE = "CAST(NULL, 'Nullable(String)')"
SIDES_COLUMNS = ("s", "b", "s0", "s1", "b0", "b1", "q0", "q1", "st", "bt", "qt")


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


def _within(windows: Sequence[Window] | None, params: Params) -> str:
    return f" AND {windows_sql(windows, params)}" if windows else ""


def compile_profile(
    scope: Scope,
    table: str,
    fields: QueryFields,
    timeframe: Timeframe,
    stored: StoredTypes,
    numbers: Sequence[str],
    windows: Sequence[Window] | None = None,
    dictionaries: str | None = None,
) -> CompiledQuery:
    """Per number key (``u0``, ``q0``..) its distinct numbers and deciles over the
    query's events within ``windows`` (all of them without); ``dictionaries`` the table
    whose text indexes a regex needle may read."""
    params = Params()
    where = Where(scope, fields, stored, dictionaries)
    columns = [f"{stored.expr(k).scalars['number']} AS n{i}" for i, k in enumerate(numbers)]
    cond = where.render(params, timeframe)
    inner = scope.select(", ".join(columns), table, cond, _within(windows, params))
    stats = [
        f"uniq(n{i}) AS u{i}, quantilesExactInclusive({DECILES})(n{i}) AS q{i}"
        for i in range(len(numbers))
    ]
    names = [name for i in range(len(numbers)) for name in (f"u{i}", f"q{i}")]
    return scope.statement(scope.around(inner, ", ".join(stats), " LIMIT 1"), params, names)


def bounds_of(numbers: Sequence[str], row: Mapping[str, Any] | None) -> dict[str, list[float]]:
    """The number keys compared by ranges, with their bounds (distinct deciles, ascending)."""
    out: dict[str, list[float]] = {}
    for i, key in enumerate(numbers):
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
    keys_left_out: int
    sides: Sides | None = None  # None: unknown, both sides read whole


def compile_bubble_up(
    scope: Scope,
    table: str,
    request: BubbleUpRequest,
    stored: StoredTypes,
    keys: Sequence[str],
    bounds: Mapping[str, list[float]],
    keys_left_out: int = 0,
    sides: Sides | None = None,
    dictionaries: str | None = None,
) -> BubbleUpPlan:
    """``stored`` holds the types of ``keys`` and of the query's and selection's keys;
    ``sides`` the events of each side and their samples' windows (``sides_of``)."""
    where = Where(scope, request.fields, stored, dictionaries)
    timeframe = Timeframe(request.from_ms, request.to_ms)
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
    cond = where.render(params, timeframe)
    selected = f"ifNull({_selection_sql(request, params, stored)}, 0)"
    # Both sides in one read: reading the keys' columns is most of the work, and a
    # UNION ALL of the sides read each granule they share twice.
    chosen, rest = sides.windows if sides else (None, None)
    tail = ""
    if chosen or rest:
        tail = f" AND ((sel{_within(chosen, params)}) OR (NOT sel{_within(rest, params)}))"
    read = scope.select(f"{selected} AS sel, {kvs}", table, cond, tail)
    counted = scope.around(
        read,
        "kv.1 AS k, kv.2 AS v, countIf(sel = 1) AS s, countIf(sel = 0) AS b",
        " ARRAY JOIN kvs AS kv GROUP BY k, v",
    )
    shares = scope.around(
        counted,
        "k, v, s, b, sum(s) OVER (PARTITION BY k) AS ks, sum(b) OVER (PARTITION BY k) AS kb,"
        " countIf(v IS NOT NULL) OVER (PARTITION BY k) AS kd,"
        " sumIf(s + b, v IS NULL) OVER (PARTITION BY k) AS kn,"
        " sumIf(s, k = 0) OVER () AS sides_s, sumIf(b, k = 0) OVER () AS sides_b",
    )
    top = params.add(TOP_VALUES, "UInt32")
    sql = scope.around(
        shares,
        ", ".join(COLUMNS),
        " ORDER BY k, s / greatest(sides_s, 1) + b / greatest(sides_b, 1) DESC, v ASC"
        f" LIMIT {top} BY k LIMIT {params.add((len(keys) + 1) * TOP_VALUES, 'UInt32')}",
    )
    return BubbleUpPlan(
        keys=tuple(keys),
        bounds=dict(bounds),
        statement=scope.statement(sql, params, COLUMNS),
        keys_left_out=keys_left_out,
        sides=sides,
    )


def compile_sides(
    scope: Scope,
    table: str,
    request: BubbleUpRequest,
    stored: StoredTypes,
    dictionaries: str | None = None,
) -> CompiledQuery:
    """How the query's events spread in time, for each side (``s``, ``b``) and for the
    query (``q``): their number (``s``, ``b``), first and last time (``s0``, ``s1``..)
    and quantiles of their times (``st``, ``bt``, ``qt``): a pass over the columns of
    the query and the selection alone."""
    params = Params()
    where = Where(scope, request.fields, stored, dictionaries)
    cond = where.render(params, Timeframe(request.from_ms, request.to_ms))
    time = "toUnixTimestamp64Milli(timestamp)"
    selected = _selection_sql(request, params, stored)
    # The reservoir is chosen by a hash of the time (the determinator): events of one
    # millisecond are all in or all out, and have the same time anyway.
    levels = f"quantilesDeterministicIf({time_levels()})({time}, toUInt64({time}), "
    columns = (
        f"countIf({selected} AS selected) AS s, countIf(NOT ifNull(selected, 0)) AS b,"
        f" minIf({time}, selected) AS s0, maxIf({time}, selected) AS s1,"
        f" minIf({time}, NOT ifNull(selected, 0)) AS b0,"
        f" maxIf({time}, NOT ifNull(selected, 0)) AS b1,"
        f" min({time}) AS q0, max({time}) AS q1,"
        f" {levels}selected) AS st, {levels}NOT ifNull(selected, 0)) AS bt, {levels}1) AS qt"
    )
    return scope.statement(scope.select(columns, table, cond, " LIMIT 1"), params, SIDES_COLUMNS)


def sides_of(row: Mapping[str, Any] | None) -> Sides:
    """The sides' counts and their samples' windows from the ``sides`` statement's row."""
    if row is None:
        return Sides((0, 0))
    counts = (int(row["s"]), int(row["b"]))

    def spread(side: str, count: int) -> Spread:
        # Without events the quantiles are NaN, which the engine's JSON writes as null.
        times = tuple(float(t) for t in row[f"{side}t"] if t is not None)
        return Spread(count, int(row[f"{side}0"]), int(row[f"{side}1"]), times)

    return Sides(
        counts,
        (sample_windows(spread("s", counts[0])), sample_windows(spread("b", counts[1]))),
        sample_windows(spread("q", sum(counts)), PROFILE_SAMPLE),
    )


def total_variation(counts: Sequence[tuple[int, int]], sides: tuple[int, int]) -> float:
    """Half the sum of |selection share - baseline share| over the values' counts.

    A share is of a side's events, or of its values where they are more: an event holds
    one value of a key, but each element of an array, so an array key's shares summed
    past 1 and its score reached 1.5."""
    selection = max(sides[0], sum(s for s, _ in counts), 1)
    baseline = max(sides[1], sum(b for _, b in counts), 1)
    return sum(abs(s / selection - b / baseline) for s, b in counts) / 2


def _near_unique(row: Mapping[str, Any], read: tuple[int, int]) -> bool:
    """A key with a value of its own in nearly every event read holding it (an id)."""
    holding = read[0] + read[1] - int(row["kn"])
    return holding >= NEAR_UNIQUE_EVENTS and int(row["kd"]) > NEAR_UNIQUE * holding


def bubble_up_answer(plan: BubbleUpPlan, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    by_key: dict[int, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_key.setdefault(int(row["k"]), []).append(row)
    totals = by_key.pop(0, [{"s": 0, "b": 0}])[0]
    read = (int(totals["s"]), int(totals["b"]))
    unique = sorted(
        plan.keys[index - 1]
        for index, found in by_key.items()
        if plan.keys[index - 1] not in plan.bounds and _near_unique(found[0], read)
    )
    dimensions = [
        dimension
        for index, found in by_key.items()
        if plan.keys[index - 1] not in unique
        and (dimension := _dimension(plan, plan.keys[index - 1], found, read)) is not None
    ]
    dimensions.sort(key=lambda d: (-float(d["score"]), str(d["key"])))
    counts = plan.sides.counts if plan.sides else read
    return {
        "selection": counts[0],
        "baseline": counts[1],
        "sampled": plan.sides.sampled if plan.sides else False,
        "sample": {"selection": read[0], "baseline": read[1]},
        "keys_left_out": plan.keys_left_out,
        "near_unique": unique,
        "dimensions": dimensions,
    }


def least_count(side: int, distinct: int) -> int:
    """The events of a side a value of a key of ``distinct`` values must hold to be
    compared on its own."""
    if distinct > TOP_VALUES:
        return MIN_COUNT
    return min(MIN_COUNT, max(2, -(-side // 10)))


def _dimension(
    plan: BubbleUpPlan, key: str, found: Sequence[Mapping[str, Any]], sides: tuple[int, int]
) -> dict[str, Any] | None:
    """One key's score and values; None when no event of either side holds a value of it
    that is common enough to compare (a near-unique key: ids, messages)."""
    selection, baseline = max(sides[0], 1), max(sides[1], 1)
    distinct = int(found[0]["kd"])
    least = least_count(selection, distinct), least_count(baseline, distinct)
    kept = [
        r
        for r in found
        if any(
            n / side >= MIN_SHARE and n >= fewest
            for n, side, fewest in zip(
                (int(r["s"]), int(r["b"])), (selection, baseline), least, strict=True
            )
        )
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
