"""BubbleUp: what sets a selection of a query's events apart from the rest (the baseline).

Three statements, each one pass over the events:

- ``profile``: over the query's newest ``PROFILE_SAMPLE`` events, each key's
  events and distinct values, and each number key's distinct numbers and
  deciles. A key with a value of its own in nearly every event (an id) is left
  out (``near_unique`` in the answer). A key with few distinct numbers is
  compared value by value; any other number key by the deciles' ranges
  (``{"from", "to"}``), where a value-by-value count of a duration would find
  every value rare on both sides.
- ``sides``: how many events of the query each side holds (the columns of the
  query and the selection alone), so that a side known to fit its sample is
  read without sorting.
- ``compare``: both sides in one statement (a UNION ALL of the selection's
  events and the baseline's, each from the time its newest ``side_sample``
  events begin when it holds more), every event's values of every key joined out as
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

from collections.abc import Collection, Mapping, Sequence
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
# Events x (keys + 1) read in one comparison at most. A (event, key) costs about 0.35 µs
# of CPU (bench/investigate.py's events: 4.3 CPU-seconds for 660,000 events of 19 keys);
# with this budget the whole answer over 1M events of 19 keys took 3.4 CPU-seconds
# (lookups, profile and sides included; 360,000 events a side): about 2 s of wall time on
# 2 idle cores by that count, not measured so (a load average of 11 made it 9 s).
ROW_BUDGET = 7_000_000
MIN_SIDE_SAMPLE = 10_000
# The most keys compared (by name); more are left out and counted in the answer.
MAX_KEYS = 200
PROFILE_SAMPLE = 10_000
# A key with a distinct value in more than this share of the profile's events holding it
# (ids: requestId, traceId) is left out: none of its values can be common on either side,
# and counting them dominated the comparison (over 1M events of 20 keys, two such keys
# took 3.7 of its 8.2 CPU-seconds). HyperDX leaves out keys 90% unique alike.
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


def compile_profile(
    scope: Scope,
    table: str,
    fields: QueryFields,
    timeframe: Timeframe,
    stored: StoredTypes,
    keys: Sequence[str],
    numbers: Sequence[str],
) -> CompiledQuery:
    """Over the query's newest ``PROFILE_SAMPLE`` events: per key (``h0``, ``d0``..) the
    events holding a value of it and its distinct values; per number key (``u0``, ``q0``..)
    its distinct numbers and deciles."""
    params = Params()
    where = _query_where(scope, fields, stored)
    columns = [f"{value_sql(stored.expr(k)).items()} AS x{i}" for i, k in enumerate(keys)]
    columns += [f"{stored.expr(k).scalars['number']} AS n{i}" for i, k in enumerate(numbers)]
    inner = scope.select(
        ", ".join(columns),
        table,
        where.render(params, timeframe),
        f" ORDER BY timestamp DESC LIMIT {params.add(PROFILE_SAMPLE, 'UInt32')}",
    )
    stats = [f"countIf(notEmpty(x{i})) AS h{i}, uniqArray(x{i}) AS d{i}" for i in range(len(keys))]
    stats += [
        f"uniq(n{i}) AS u{i}, quantilesExactInclusive({DECILES})(n{i}) AS q{i}"
        for i in range(len(numbers))
    ]
    names = [name for i in range(len(keys)) for name in (f"h{i}", f"d{i}")]
    names += [name for i in range(len(numbers)) for name in (f"u{i}", f"q{i}")]
    return scope.statement(scope.around(inner, ", ".join(stats), " LIMIT 1"), params, names)


def near_unique(
    keys: Sequence[str], row: Mapping[str, Any] | None, ranged: Collection[str] = ()
) -> list[str]:
    """The keys with a value of their own in nearly every event (ids): at least
    ``NEAR_UNIQUE_EVENTS`` events of the profile hold one, and ``NEAR_UNIQUE`` as many
    distinct values as those events; not those ``ranged`` (numbers compared by ranges,
    a duration's)."""
    if row is None:
        return []
    return [
        key
        for i, key in enumerate(keys)
        if key not in ranged
        and int(row[f"h{i}"]) >= NEAR_UNIQUE_EVENTS
        and int(row[f"d{i}"]) > NEAR_UNIQUE * int(row[f"h{i}"])
    ]


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
    side_sample: int
    keys_left_out: int
    sampled: bool | None = None  # a side held more events than its sample; None: unknown
    near_unique: tuple[str, ...] = ()  # keys left out: a distinct value in nearly every event


def compile_bubble_up(
    scope: Scope,
    table: str,
    request: BubbleUpRequest,
    stored: StoredTypes,
    keys: Sequence[str],
    bounds: Mapping[str, list[float]],
    keys_left_out: int = 0,
    sides: Sides | None = None,
    near_unique_keys: tuple[str, ...] = (),
) -> BubbleUpPlan:
    """``stored`` holds the types of ``keys`` and of the query's and selection's keys;
    ``sides`` the events of each side (``compile_sides``), when known."""
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
    reads = []
    for side, since in zip((1, 0), sides.since if sides else (None, None), strict=True):
        cond = where.render(params, timeframe)
        selected = _selection_sql(request, params, stored)
        tail = f" AND {selected}" if side else f" AND NOT ifNull({selected}, 0)"
        if since is not None:
            # Its newest events, by time: the primary key skips the older parts. Sorting
            # instead (ORDER BY timestamp DESC LIMIT) sorted every event's values when
            # the query spans datasets (the sort key has the dataset before the time):
            # 26 CPU-seconds for a baseline of 9.7M events against 4 (this, 631,000 read).
            tail += f" AND timestamp >= fromUnixTimestamp64Milli({params.add(since, 'Int64')})"
        elif sides is None:  # unknown: newest first, stopping at the sample
            tail += f" ORDER BY timestamp DESC LIMIT {params.add(sample, 'UInt32')}"
        reads.append(scope.select(f"{side} AS sel, {kvs}", table, cond, tail))
    counted = scope.around(
        reads,
        "kv.1 AS k, kv.2 AS v, countIf(sel = 1) AS s, countIf(sel = 0) AS b",
        " ARRAY JOIN kvs AS kv GROUP BY k, v",
    )
    shares = scope.around(
        counted,
        "k, v, s, b, sum(s) OVER (PARTITION BY k) AS ks, sum(b) OVER (PARTITION BY k) AS kb,"
        " sumIf(s, k = 0) OVER () AS sides_s, sumIf(b, k = 0) OVER () AS sides_b",
    )
    top = params.add(TOP_VALUES, "UInt32")
    sql = scope.around(
        shares,
        "k, v, s, b, ks, kb",
        " ORDER BY k, s / greatest(sides_s, 1) + b / greatest(sides_b, 1) DESC, v ASC"
        f" LIMIT {top} BY k LIMIT {params.add((len(keys) + 1) * TOP_VALUES, 'UInt32')}",
    )
    return BubbleUpPlan(
        keys=tuple(keys),
        bounds=dict(bounds),
        statement=scope.statement(sql, params, COLUMNS),
        side_sample=sample,
        keys_left_out=keys_left_out,
        sampled=None if sides is None else any(t is not None for t in sides.since),
        near_unique=near_unique_keys,
    )


# The levels of a side's times the ``sides`` statement gives, to find where its newest
# ``side_sample`` events begin.
TIME_LEVELS = tuple(i / 100 for i in range(1, 100))


def compile_sides(
    scope: Scope, table: str, request: BubbleUpRequest, stored: StoredTypes
) -> CompiledQuery:
    """How many events of the query each side holds (``s``, ``b``) and the percentiles of
    their times (``ts``, ``tb``): a pass over the columns of the query and the selection
    alone."""
    params = Params()
    where = _query_where(scope, request.fields, stored)
    cond = where.render(params, Timeframe(request.from_ms, request.to_ms))
    selected = _selection_sql(request, params, stored)
    levels = ", ".join(f"{level:g}" for level in TIME_LEVELS)
    time = "toUnixTimestamp64Milli(timestamp)"
    columns = (
        f"countIf({selected} AS selected) AS s, countIf(NOT ifNull(selected, 0)) AS b,"
        f" quantilesIf({levels})({time}, selected) AS ts,"
        f" quantilesIf({levels})({time}, NOT ifNull(selected, 0)) AS tb"
    )
    return scope.statement(
        scope.select(columns, table, cond, " LIMIT 1"), params, ("s", "b", "ts", "tb")
    )


@dataclass(frozen=True)
class Sides:
    """The events of each side, and for a side with more than its sample the time its
    newest ``side_sample`` events begin at (about: from the percentiles of its times)."""

    counts: tuple[int, int]
    since: tuple[int | None, int | None] = (None, None)


def sides_of(row: Mapping[str, Any] | None, keys: int) -> Sides:
    if row is None:
        return Sides((0, 0))
    sample = side_sample(keys)
    counts = (int(row["s"]), int(row["b"]))

    def since(count: int, times: Sequence[float]) -> int | None:
        if count <= sample or not times:
            return None
        wanted = 1 - sample / count  # the share of the side's events older than its sample
        levels = zip(TIME_LEVELS, times, strict=True)
        return int(next((t for level, t in levels if level >= wanted), times[-1]))

    return Sides(counts, (since(counts[0], row["ts"]), since(counts[1], row["tb"])))


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
        "sampled": max(sides) >= plan.side_sample if plan.sampled is None else plan.sampled,
        "keys_left_out": plan.keys_left_out,
        "near_unique": list(plan.near_unique),
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
