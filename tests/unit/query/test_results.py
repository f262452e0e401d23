"""Result shaping: rows of the compiled statements -> the run's data object."""

from __future__ import annotations

import math
import sys
from typing import Any

import orjson
import pytest

from limelight.query.calculations_plan import HEATMAP_PER_DOUBLING
from limelight.query.compile import RunOptions, Timeframe, compile_run
from limelight.query.results import events_rows, heatmap_buckets, lookup, newest_page, shape
from limelight.query.spec import validate_fields
from tests.query_reference import as_sent

FRAME = Timeframe(from_ms=1_000_000, to_ms=1_000_000 + 10 * 60_000)


def test_aggregates_and_series_carry_names_groups_and_every_bucket() -> None:
    plan = compile_run(
        validate_fields(
            {
                "calculations": [{"operator": "COUNT"}, {"operator": "VARIANCE", "key": "d"}],
                "group_bys": [{"key": "service"}],
            }
        ),
        workspace_id="w",
        environment_id="e",
        table="db.events",
        timeframe=FRAME,
        options=RunOptions(granularity_ms=60_000),
    )
    rows: dict[str, list[dict[str, Any]]] = {
        "aggregates": [
            {"g0_0": "api", "g0_1": None, "g0_2": None, "v0": 3, "v1": float("nan"), "_count": 3}
        ],
        "series": [
            {"_time": FRAME.from_ms + 120_000, "g0_0": "api", "v0": 3, "v1": None, "_count": 3},
            {"_time": FRAME.from_ms, "g0_0": None, "g0_1": 7, "v0": 1, "v1": None, "_count": 1},
        ],
    }
    data = shape(plan, rows)
    assert data["aggregates"] == [
        {"groups": {"service": "api"}, "values": {"COUNT": 3, "VARIANCE(d)": None, "_count": 3}}
    ]
    assert [b["time"] for b in data["series"]] == [FRAME.from_ms + i * 60_000 for i in range(10)]
    assert data["series"][2]["data"] == [
        {"groups": {"service": "api"}, "aggregates": {"COUNT": 3, "VARIANCE(d)": None, "_count": 3}}
    ]
    # The group 7 is not among the aggregates shown, so its points are left out.
    assert data["series"][0]["data"] == []


def test_default_granularity_gives_about_sixty_readable_buckets() -> None:
    plan = compile_run(
        validate_fields({"calculations": [{"operator": "COUNT"}]}),
        workspace_id="w",
        environment_id="e",
        table="t",
        timeframe=Timeframe(0, 24 * 3600_000),
        options=RunOptions(),
    )
    assert plan.granularity_ms == 30 * 60_000  # 48 buckets of 30 minutes


def test_events_are_whole_with_system_fields_or_only_the_keys_asked() -> None:
    raw = orjson.dumps({"a": {"b": 1}, "c.d": 2, "_service": "spoofed"}).decode()
    row = {
        "raw": raw,
        "_timestamp": "1700000000000",
        "_dataset": "ds",
        "_service": "api",
        "_namespace": "default",
        "_id": "x1",
    }
    whole = compile_run(
        validate_fields({}),
        workspace_id="w",
        environment_id="e",
        table="t",
        timeframe=FRAME,
        options=RunOptions(),
    )
    data = as_sent(shape(whole, {"events": [row], "count": [{"count": 41}]}))
    assert data == {
        "events": [
            {
                "a": {"b": 1},
                "c.d": 2,
                "_timestamp": 1700000000000,
                "_dataset": "ds",
                "_service": "api",
                "_namespace": "default",
                "_id": "x1",
            }
        ],
        "count": 41,
    }
    picked = compile_run(
        validate_fields({"keys": [{"key": "a.b"}, {"key": "c.d"}, {"key": "_id"}, {"key": "zz"}]}),
        workspace_id="w",
        environment_id="e",
        table="t",
        timeframe=FRAME,
        options=RunOptions(),
    )
    assert as_sent(shape(picked, {"events": [row], "count": [{"count": 1}]}))["events"] == [
        {"a.b": 1, "c.d": 2, "_id": "x1"}
    ]


def test_lookup_finds_nested_and_dotted_keys() -> None:
    event = {"a": {"b.c": {"d": 1}}, "x.y": {"z": 2}, "n": None}
    assert lookup(event, "a.b.c.d") == (True, 1)
    assert lookup(event, "x.y.z") == (True, 2)
    assert lookup(event, "n") == (True, None)
    assert lookup(event, "a.q") == (False, None)


def _page_plan(limit: int, offset: int = 0) -> Any:
    return compile_run(
        validate_fields({}),
        workspace_id="w",
        environment_id="e",
        table="t",
        timeframe=FRAME,
        options=RunOptions(limit=limit, offset=offset),
    )


def _rows(*pairs: tuple[int, str]) -> list[dict[str, Any]]:
    return [{"_timestamp": t, "_id": i} for t, i in pairs]


def test_the_newest_rows_give_the_page_in_time_then_id_order() -> None:
    # In any order among equal times, as the engine reads them; one row beyond the page.
    newest = _rows((9, "a"), (9, "c"), (8, "b"), (8, "z"), (7, "q"))
    page = newest_page(_page_plan(limit=4), newest)
    assert page == _rows((9, "c"), (9, "a"), (8, "z"), (8, "b"))
    assert newest_page(_page_plan(limit=2, offset=2), newest) == _rows((8, "z"), (8, "b"))


def test_a_tie_at_the_end_of_the_page_leaves_it_to_the_exact_statement() -> None:
    # The row beyond the page is as new as the page's last: another event of that
    # time may not have been read, and it could belong on the page.
    newest = _rows((9, "a"), (8, "b"), (8, "c"))
    assert newest_page(_page_plan(limit=2), newest) is None
    assert events_rows(_page_plan(limit=2), {"newest": newest}) == (None, None)


def test_the_count_is_told_by_the_rows_when_the_matches_end_on_the_page() -> None:
    few = _rows((9, "a"), (8, "b"))
    assert events_rows(_page_plan(limit=5), {"newest": few}) == (few, 2)
    # Past the last match: an empty page, and still the count.
    assert events_rows(_page_plan(limit=5, offset=10), {"newest": few}) == ([], 2)
    full = _rows((9, "a"), (8, "b"), (7, "c"))
    assert events_rows(_page_plan(limit=2), {"newest": full}) == (full[:2], None)
    # The exact statement: a full page cannot tell, an empty page past the first neither.
    assert events_rows(_page_plan(limit=2), {"events": full[:2]}) == (full[:2], None)
    assert events_rows(_page_plan(limit=2, offset=4), {"events": []}) == ([], None)
    assert events_rows(_page_plan(limit=5, offset=4), {"events": full}) == (full, 7)


def test_the_last_hour_tells_the_page_only_when_it_holds_one_event_beyond_it() -> None:
    recent = _rows((9, "a"), (8, "b"), (7, "c"))
    newest = _rows((9, "a"), (8, "b"), (7, "c"), (3, "d"))
    # Full: every event outside it is older than all of its events.
    assert events_rows(_page_plan(limit=2), {"recent": recent}) == (recent[:2], None)
    # Too short: the whole timeframe must tell, and until it has, nothing is told.
    assert events_rows(_page_plan(limit=3), {"recent": recent}) == (None, None)
    both = {"recent": recent, "newest": newest}
    assert events_rows(_page_plan(limit=3), both) == (newest[:3], None)
    assert events_rows(_page_plan(limit=4), both) == (newest, 4)


def test_heatmap_buckets_join_neighbours_until_the_range_fits_and_keep_one_set_of_edges() -> None:
    # Fine buckets (8 to a doubling) 0..99 of positive values at two times, 0 and one
    # negative bucket: 100 fine buckets need a width of 4 to fit in 40.
    rows = [{"_time": 0, "_sign": 1, "_bucket": b, "_count": 1} for b in range(100)]
    rows += [
        {"_time": 60_000, "_sign": 1, "_bucket": 3, "_count": 2},
        {"_time": 60_000, "_sign": 0, "_bucket": 0, "_count": 5},
        {"_time": 60_000, "_sign": -1, "_bucket": 8, "_count": 7},
    ]
    out = heatmap_buckets(rows)
    first = out[0]
    assert len(first) == 25 and sum(b["count"] for b in first) == 100
    assert first[0] == {"min": 1.0, "max": 2.0**0.5, "count": 4}
    assert all(a["max"] == b["min"] for a, b in zip(first, first[1:], strict=False))
    # The same edges at another time: fine bucket 3 falls in the first joined bucket.
    assert out[60_000] == [
        {"min": -(2.0**1.5), "max": -2.0, "count": 7},
        {"min": 0.0, "max": 0.0, "count": 5},
        {"min": 1.0, "max": 2.0**0.5, "count": 2},
    ]


@pytest.mark.parametrize("sign", [1, -1])
def test_the_heatmap_bucket_of_the_largest_doubles_ends_at_the_largest_double(sign: int) -> None:
    """Its top edge, 2**1024, is past the doubles: an OverflowError failed the run."""
    index = math.floor(math.log2(1.7e308) * HEATMAP_PER_DOUBLING)  # the last below 2**1024
    [bucket] = heatmap_buckets([{"_time": 0, "_sign": sign, "_bucket": index, "_count": 3}])[0]
    edges = (2.0 ** (index / HEATMAP_PER_DOUBLING), sys.float_info.max)
    assert (bucket["min"], bucket["max"]) == (edges if sign > 0 else (-edges[1], -edges[0]))
    assert bucket["count"] == 3
