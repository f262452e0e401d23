"""The answers of field values and BubbleUp from their rows: values decoded with their
kinds, shares, and the score (total variation distance)."""

from __future__ import annotations

import pytest

from limelight.query.bubble_up import (
    BubbleUpPlan,
    bubble_up_answer,
    number_keys,
    sides_of,
    total_variation,
)
from limelight.query.bubble_up_sample import TIME_LEVELS, Sides
from limelight.query.keys import StoredTypes
from limelight.query.scope import Scope
from limelight.query.sql import Params
from limelight.query.values import decode


def test_values_come_back_with_their_kinds() -> None:
    assert decode("s200") == "200"
    assert decode("n200") == 200 and isinstance(decode("n200"), int)
    assert decode("n0.25") == 0.25
    assert decode("n1e+300") == 1e300
    assert decode("btrue") is True and decode("bfalse") is False
    assert decode("s") == "" and decode(None) is None


def test_a_numbers_bucket_is_the_range_between_its_bounds() -> None:
    bounds = [10.0, 20.5, 30.0]
    assert decode("r1", bounds) == {"from": None, "to": 10}
    assert decode("r2", bounds) == {"from": 10, "to": 20.5}
    assert decode("r3", bounds) == {"from": 20.5, "to": 30}
    assert decode("r0", bounds) == {"from": 30, "to": None}  # from the last bound on


def test_the_score_is_half_the_sum_of_the_share_differences() -> None:
    assert total_variation([(10, 50), (0, 50)], (10, 100)) == pytest.approx(0.5)
    assert total_variation([(5, 50), (5, 50)], (10, 100)) == 0
    assert total_variation([(10, 0), (0, 100)], (10, 100)) == 1


def test_an_array_keys_score_is_between_its_values_shares_at_most_1() -> None:
    # 10 events a side, each holding a two-element array: 20 values a side, none shared.
    assert total_variation([(10, 0), (10, 0), (0, 10), (0, 10)], (10, 10)) == 1
    # The same values on both sides, in the same proportions: nothing sets them apart.
    assert total_variation([(10, 20), (10, 20)], (10, 20)) == 0


def _plan(keys: tuple[str, ...], sides: Sides | None = None) -> BubbleUpPlan:
    # The answer is shaped from the rows alone: any statement of the tenant will do.
    scope, params = Scope("ws", "env"), Params()
    select = scope.select("1 AS one", "events", scope.where(params))
    statement = scope.statement(select, params, ("one",))
    return BubbleUpPlan(keys, {}, statement, keys_left_out=0, sides=sides)


def _row(
    k: int, v: str | None, s: int, b: int, ks: int, kb: int, kd: int = 2, kn: int = 0
) -> dict[str, object]:
    """A value's counts per side, its key's totals per side, distinct values and events
    lacking it (``kd``, ``kn``)."""
    return {"k": k, "v": v, "s": s, "b": b, "ks": ks, "kb": kb, "kd": kd, "kn": kn}


def test_keys_are_ranked_by_score_and_rare_values_count_as_one() -> None:
    rows = [
        _row(0, None, 100, 900, 100, 900),
        # region: all of the selection in one value, a sixth of the baseline
        _row(1, "seu", 100, 150, 100, 900),
        _row(1, "sus", 0, 750, 100, 900),
        # id: 1,000 values seen once; the top 2 returned, the rest summed from the totals
        _row(2, "sa", 1, 0, 100, 900, kd=1000),
        _row(2, "sb", 0, 1, 100, 900, kd=1000),
        # plan: a missing key (null) is a value of its own
        _row(3, None, 50, 450, 100, 900),
        _row(3, "sfree", 50, 450, 100, 900),
    ]
    answer = bubble_up_answer(_plan(("region", "id", "plan")), rows)
    assert (answer["selection"], answer["baseline"], answer["sampled"]) == (100, 900, False)
    region, plan = answer["dimensions"]  # the id, a value of its own in each event: left out
    assert answer["near_unique"] == ["id"]
    assert region == {
        "key": "region",
        "score": pytest.approx(1 - 150 / 900),
        "values": [
            {"value": "eu", "selection": 1.0, "baseline": 150 / 900},
            {"value": "us", "selection": 0.0, "baseline": 750 / 900},
        ],
    }
    assert plan["key"] == "plan" and plan["score"] == 0
    assert plan["values"][0] == {"value": None, "selection": 0.5, "baseline": 0.5}


def test_a_sampled_side_counts_all_its_events_and_shares_those_read() -> None:
    sides = Sides((3, 50_000), (None, ((1_000, 2_000),)))
    rows = [_row(0, None, 3, 1000, 3, 1000), _row(1, "sa", 3, 250, 3, 1000)]
    answer = bubble_up_answer(_plan(("tier",), sides), rows)
    assert (answer["selection"], answer["baseline"], answer["sampled"]) == (3, 50_000, True)
    assert answer["sample"] == {"selection": 3, "baseline": 1000}
    assert answer["dimensions"][0]["values"][0] == {
        "value": "a",
        "selection": 1.0,
        "baseline": 0.25,
    }
    empty = bubble_up_answer(_plan(()), [])
    assert (empty["selection"], empty["sampled"]) == (0, False)


def test_a_query_without_events_has_two_empty_sides_read_whole() -> None:
    # The engine's quantiles of no events are NaN, written as null.
    row: dict[str, object] = dict.fromkeys(("s", "b", "s0", "s1", "b0", "b1", "q0", "q1"), 0)
    row.update({f"{side}t": [None] * (TIME_LEVELS - 1) for side in "sbq"})
    assert sides_of(row) == Sides((0, 0))
    assert sides_of(None) == Sides((0, 0))


def test_a_key_of_the_events_may_begin_with_an_underscore_and_hold_numbers() -> None:
    stored = StoredTypes({"_latency": frozenset({"Int64"}), "name": frozenset({"String"})})
    assert number_keys(["_service", "_latency", "name"], stored) == ["_latency"]


def test_a_value_of_a_few_events_of_a_small_selection_is_compared_on_its_own() -> None:
    """A status held by 4 of a 14-event selection and no baseline event is what sets it
    apart: it is shown, not summed with the rarer values. A value held by one event of a
    side is not, on either side."""
    rows = [
        _row(0, None, 14, 110, 14, 110),
        _row(1, "n200", 10, 100, 14, 110, kd=4),
        _row(1, "n502", 4, 0, 14, 110, kd=4),
        _row(1, "n402", 0, 9, 14, 110, kd=4),
        _row(1, "n404", 0, 1, 14, 110, kd=4),
        _row(2, "smobile", 1, 1, 14, 110),
        _row(2, None, 13, 109, 14, 110),
        # trace ids, two events each: a key of many values needs 5 events of a value
        *(_row(3, f"st{i}", 2, 0, 14, 110, kd=60) for i in range(5)),
        *(_row(3, f"sb{i}", 0, 2, 14, 110, kd=60) for i in range(50)),
    ]
    answer = bubble_up_answer(_plan(("status", "client", "traceId")), rows)
    # client: one event a side holds a value; its absence alone is common, so it is left out.
    [status] = answer["dimensions"]
    assert status["key"] == "status"
    assert [v["value"] for v in status["values"]] == [200, 502, 402]
    assert status["values"][1] == {"value": 502, "selection": 4 / 14, "baseline": 0.0}
    # 404 (one baseline event) counts with the rest: 4/14 of the selection apart.
    assert status["score"] == pytest.approx(0.5 * (abs(10 / 14 - 100 / 110) + 4 / 14 + 10 / 110))
