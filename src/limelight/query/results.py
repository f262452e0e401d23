"""Result shaping: the rows of a plan's statements -> the run's ``data`` object.

Series times are unix milliseconds (the start of each bucket); every bucket of
the timeframe is present, with an empty ``data`` list when nothing fell in it.
Numbers that are not finite (the sample variance of one value) become null.
Whole events are JSON text already (``orjson.Fragment``, see
``event_json.event_json``): encode the data with orjson.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from typing import Any

import orjson

from limelight.event_json import SYSTEM_FIELDS, dumps_exact, event_json, parsed_event
from limelight.query.calculations_plan import HEATMAP_PER_DOUBLING
from limelight.query.plans import CalculationsPlan, EventsPlan, Plan, Statement

# A HEATMAP's answer has at most this many value buckets of each sign: neighbours of the
# fixed fine buckets (8 to a doubling) are joined, a power of two of them, until the
# values' whole range fits (a chart of about 40 rows reads well).
HEATMAP_MAX_BUCKETS = 40


def _number(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _groups(plan: CalculationsPlan, row: Mapping[str, Any]) -> dict[str, Any]:
    """Each group-by key's value: the one of its kind columns that is not null, or the
    last where a number's exact integer follows its Float64 view (both hold then)."""
    out: dict[str, Any] = {}
    for i, (key, width) in enumerate(plan.groups):
        kinds = [row.get(f"g{i}_{j}") for j in range(width)]
        out[key] = next((v for v in reversed(kinds) if v is not None), None)
    return out


def _values(plan: CalculationsPlan, row: Mapping[str, Any]) -> dict[str, Any]:
    values = {name: _number(row.get(f"v{i}")) for i, name in enumerate(plan.values)}
    values["_count"] = int(row.get("_count", 0))
    return values


def _group_id(groups: Mapping[str, Any]) -> bytes:
    return orjson.dumps(groups, option=orjson.OPT_SORT_KEYS)


def _split_sets(
    rows: Mapping[Statement, list[dict[str, Any]]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(total rows, bucket rows): one statement with grouping sets tells them apart by
    ``_total``; a plan with a separate ``series`` statement has no ``_total`` column."""
    totals: list[dict[str, Any]] = []
    buckets = list(rows.get(Statement.SERIES, []))
    for r in rows[Statement.AGGREGATES]:
        (totals if r.get("_total", 1) else buckets).append(r)
    return totals, buckets


def _edges(sign: int, index: int, width: int) -> tuple[float, float]:
    """(min, max) of the value bucket ``index`` of ``width`` fine buckets, by sign."""
    if sign == 0:
        return 0.0, 0.0
    low = _power_of_two(index * width / HEATMAP_PER_DOUBLING)
    high = _power_of_two((index + 1) * width / HEATMAP_PER_DOUBLING)
    return (low, high) if sign > 0 else (-high, -low)


def _power_of_two(exponent: float) -> float:
    """2 to ``exponent``; the largest double where that is past the doubles: the top edge
    of the bucket of the largest values is 2**1024, whose OverflowError failed the run."""
    return 2.0**exponent if exponent < _FLOAT_EXPONENTS else sys.float_info.max


_FLOAT_EXPONENTS = sys.float_info.max_exp  # 1024: 2**1024 is past the largest double


def heatmap_buckets(rows: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """Per bucket time, the value buckets that hold events: ``{"min", "max", "count"}``,
    from the smallest value up; ``min`` is inclusive and ``max`` exclusive for positive
    values (the other way round for negative ones, mirrored), and 0 is a bucket alone.

    Every time bucket uses the same edges: one width (a power of two of fine buckets)
    for the whole answer, the smallest that leaves at most ``HEATMAP_MAX_BUCKETS``
    value buckets of each sign between the smallest and the largest held."""
    fine = [(int(r["_time"]), int(r["_sign"]), int(r["_bucket"]), int(r["_count"])) for r in rows]
    width = 1
    for sign in (-1, 1):
        held = [b for _, s, b, _ in fine if s == sign]
        if held:
            while (max(held) // width) - (min(held) // width) + 1 > HEATMAP_MAX_BUCKETS:
                width *= 2
    joined: dict[int, dict[tuple[int, int], int]] = {}
    for time, sign, index, count in fine:
        cell = (sign, index // width if sign else 0)
        per_time = joined.setdefault(time, {})
        per_time[cell] = per_time.get(cell, 0) + count
    out: dict[int, list[dict[str, Any]]] = {}
    for time, cells in joined.items():
        # A negative bucket of a larger index holds smaller values: order by the edges.
        edged = sorted((_edges(sign, index, width), n) for (sign, index), n in cells.items())
        out[time] = [{"min": low, "max": high, "count": n} for (low, high), n in edged]
    return out


def _shape_calculations(
    plan: CalculationsPlan, rows: Mapping[Statement, list[dict[str, Any]]]
) -> dict[str, Any]:
    totals, buckets = _split_sets(rows)
    aggregates = [{"groups": _groups(plan, r), "values": _values(plan, r)} for r in totals]
    shown = {_group_id(a["groups"]) for a in aggregates}
    by_time: dict[int, list[dict[str, Any]]] = {}
    for r in buckets:
        groups = _groups(plan, r)
        if _group_id(groups) in shown:
            by_time.setdefault(int(r["_time"]), []).append(
                {"groups": groups, "aggregates": _values(plan, r)}
            )
    step = plan.granularity_ms
    start, end = plan.timeframe.from_ms, plan.timeframe.to_ms
    series: list[dict[str, Any]] = [
        {"time": t, "data": by_time.get(t, [])} for t in range(start, max(end, start + 1), step)
    ]
    if Statement.HEATMAP in rows:  # the same edges in every bucket (``heatmap_buckets``)
        heatmap = heatmap_buckets(rows[Statement.HEATMAP])
        for point in series:
            point["buckets"] = heatmap.get(point["time"], [])
    return {"aggregates": aggregates, "series": series}


def lookup(event: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    """(found, value) of a dotted path; ``a.b`` finds {"a": {"b": ..}} and {"a.b": ..} alike."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        head = ".".join(parts[:cut])
        if head not in event:
            continue
        if cut == len(parts):
            return True, event[head]
        inner = event[head]
        if isinstance(inner, Mapping):
            found, value = lookup(inner, ".".join(parts[cut:]))
            if found:
                return True, value
    return False, None


def _project(event: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """Only the keys asked for; a key the event does not hold is left out."""
    out: dict[str, Any] = {}
    for key in keys:
        found, value = (
            (key in event, event.get(key)) if key in SYSTEM_FIELDS else lookup(event, key)
        )
        if found:
            out[key] = value
    return out


def _picked(row: Mapping[str, Any], keys: tuple[str, ...]) -> orjson.Fragment:
    """The keys asked for of a row's event, as JSON (integers beyond 64 bits exact)."""
    event, big = parsed_event(row)
    return orjson.Fragment(dumps_exact(_project(event, keys), big))


def newest_page(plan: EventsPlan, newest: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The page cut from the rows of ``newest``, or None when they cannot tell it.

    ``newest`` holds the first ``offset + limit + 1`` matches by time alone, in
    any order among equal times. When the one beyond the page is older than the
    page's last, every match at least as new as that one is among them, so
    ordering them by (time, id) gives the exact page; when it is as new, a tie
    may have left a match out, and the ``events`` statement must tell.
    """
    end = plan.offset + plan.limit
    if len(newest) > end and int(newest[end]["_timestamp"]) >= int(newest[end - 1]["_timestamp"]):
        return None
    # The engine compares ids as bytes; UTF-8 keeps code point order, so str order agrees.
    ordered = sorted(newest[:end], key=lambda r: (int(r["_timestamp"]), r["_id"]), reverse=True)
    return ordered[plan.offset :]


def newest_rows(
    plan: EventsPlan, rows: Mapping[Statement, list[dict[str, Any]]]
) -> list[dict[str, Any]] | None:
    """The first ``offset + limit + 1`` matches by time alone (fewer when there are
    no more), or None when the rows at hand do not hold them.

    ``recent`` (the timeframe's last stretch) holds them when it is full: every
    match outside it is older than all of its rows.
    """
    recent = rows.get(Statement.RECENT)
    if recent is not None and len(recent) > plan.offset + plan.limit:
        return recent
    return rows.get(Statement.NEWEST)


def events_rows(
    plan: EventsPlan, rows: Mapping[Statement, list[dict[str, Any]]]
) -> tuple[list[dict[str, Any]] | None, int | None]:
    """(the page's rows, the count when they tell it); the page None when the rows
    at hand cannot tell it (``recent`` with too few events, or ``newest`` alone with
    a tie at its end)."""
    newest = newest_rows(plan, rows)
    page = newest_page(plan, newest) if newest is not None else None
    if newest is not None and page is not None:
        return page, len(newest) if len(newest) <= plan.offset + plan.limit else None
    if Statement.EVENTS not in rows:
        return None, None
    page = rows[Statement.EVENTS]
    # A page that is not full ends the matches (an empty one past the first tells nothing).
    told = len(page) < plan.limit and (page or plan.offset == 0)
    return page, plan.offset + len(page) if told else None


def _shape_events(
    plan: EventsPlan, rows: Mapping[Statement, list[dict[str, Any]]]
) -> dict[str, Any]:
    page, count = events_rows(plan, rows)
    if page is None:
        raise ValueError("the newest rows cannot tell the page and `events` was not run")
    events: list[Any]
    if plan.keys is None:
        events = [event_json(r) for r in page]
    else:
        events = [_picked(r, plan.keys) for r in page]
    count_rows = rows.get(Statement.COUNT)
    if count_rows:
        count = int(count_rows[0]["count"])
    if count is None:
        raise ValueError("the page cannot tell the count and no count was run")
    return {"events": events, "count": count}


def shape(plan: Plan, rows: Mapping[Statement, list[dict[str, Any]]]) -> dict[str, Any]:
    """The run's ``data`` (without ``statistics``, which the runner adds)."""
    if isinstance(plan, CalculationsPlan):
        return _shape_calculations(plan, rows)
    return _shape_events(plan, rows)
