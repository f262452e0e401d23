"""Every golden investigation statement runs on chDB and answers like the reference."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from limelight.query.bubble_up import bounds_of, bubble_up_answer
from limelight.query.bubble_up_sample import TIME_LEVELS
from limelight.query.bubble_up_spec import Region
from limelight.query.field_values import field_values_answer
from limelight.runs.limits import RunLimits
from limelight.runs.lookups import stored_types
from limelight.settings import Settings
from limelight.tenant import Tenant
from tests import investigate_reference as iref
from tests import query_reference as ref
from tests.unit.query.golden_cases import TIMEFRAME
from tests.unit.query.golden_investigate_cases import (
    BUBBLE_UP,
    ENVIRONMENT,
    FIELD_VALUES,
    PROFILE_NUMBERS,
    STORED,
    WORKSPACE,
    bubble_up_plan,
    bubble_up_request,
    bubble_up_sides,
    field_values_plan,
    profile_statement,
    sides_statement,
)

TENANT = Tenant(WORKSPACE, ENVIRONMENT)
FRM, TO = TIMEFRAME.from_ms, TIMEFRAME.to_ms


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield ref.shared_chdb_store(tmp_path_factory)


@pytest.fixture(scope="module")
def records(store: Any) -> list[ref.Record]:
    events = ref.generate_events(600, seed=7, now_ms=TO - 1, span_ms=3_600_000)
    stored = ref.store_events(store, TENANT, "golden-a", events[:400])
    stored += ref.store_events(store, TENANT, "golden-b", events[400:])
    # Another environment of the same workspace, at the same times: never in an answer.
    ref.store_events(store, Tenant(WORKSPACE, "env_other"), "golden-a", events[:100])
    return stored


def test_the_cases_know_every_type_the_events_hold(store: Any, records: list[ref.Record]) -> None:
    assert STORED.paths is not None
    held = stored_types(store, TENANT, sorted(STORED.paths), RunLimits.from_settings(Settings()))
    assert held == STORED.paths


DATASET_A = {"namespaces": [{"type": "dataset", "value": "golden-a"}]}


@pytest.mark.parametrize("name", sorted(FIELD_VALUES))
def test_field_values_case_answers_like_the_reference(
    name: str, store: Any, records: list[ref.Record]
) -> None:
    key, filters, limit, sample = FIELD_VALUES[name]
    plan = field_values_plan(name)
    held = [
        r
        for r in records
        if r.system["_dataset"] == "golden-a" and FRM <= r.system["_timestamp"] < TO
    ]
    assert store.query(plan.events.sql, plan.events.params).rows == [{"events": len(held)}]
    rows = store.query(plan.statement.sql, plan.statement.params, plan.statement.columns).rows
    answer = field_values_answer(plan, rows)
    counts, events = iref.top_values(records, {**DATASET_A, "filters": filters}, key, FRM, TO)
    if len(held) <= sample:
        # Read in no order, as a timeframe the sample holds whole is: the same answer.
        whole = store.query(plan.whole.sql, plan.whole.params, plan.whole.columns).rows
        assert field_values_answer(plan, whole) == answer
    if events > sample:
        assert (answer["events"], answer["sampled"]) == (sample, True)
        assert sum(v["count"] for v in answer["values"]) <= sum(counts.values())
        return
    assert (answer["events"], answer["distinct"], answer["sampled"]) == (events, len(counts), False)
    got = {iref.canon(v["value"]): v["count"] for v in answer["values"]}
    assert all(counts[value] == n for value, n in got.items())
    assert sorted(got.values(), reverse=True) == sorted(counts.values(), reverse=True)[:limit]


@pytest.mark.parametrize("sampled", [False, True])
def test_the_profile_finds_the_deciles_of_number_keys_with_many_values(
    sampled: bool, store: Any, records: list[ref.Record]
) -> None:
    statement = profile_statement(sampled)
    [row] = store.query(statement.sql, statement.params, statement.columns).rows
    bounds = bounds_of(PROFILE_NUMBERS, row)
    assert set(bounds) == {"duration"}  # ratio holds four numbers: compared one by one
    assert bounds["duration"] == sorted(bounds["duration"]) and len(bounds["duration"]) == 9
    windows = bubble_up_sides(BUBBLE_UP["bubble_sampled"][2] or (0, 0)).query
    assert windows is not None
    read = [
        r
        for r in ref.select(records, DATASET_A, FRM, TO)
        if not sampled or any(a <= r.system["_timestamp"] < b for a, b in windows)
    ]
    assert 0 < len(read) < (400 if sampled else 401)
    for i, key in enumerate(PROFILE_NUMBERS):
        numbers = {v for r in read if (v := ref.get(r, key)) is not None}
        numbers = {v for v in numbers if iref.canon(v)[0] == "number"}
        assert row[f"u{i}"] == len(numbers), key


def test_the_sides_are_counted_like_the_reference(store: Any, records: list[ref.Record]) -> None:
    statement = sides_statement()
    [row] = store.query(statement.sql, statement.params, statement.columns).rows
    body = BUBBLE_UP["bubble_filters"][0]
    chosen, rest = iref.sides(records, DATASET_A, body["selection"], FRM, TO)
    assert (row["s"], row["b"]) == (len(chosen), len(rest))
    for side, events in (("s", chosen), ("b", rest), ("q", chosen + rest)):
        times = sorted(r.system["_timestamp"] for r in events)
        assert (row[f"{side}0"], row[f"{side}1"]) == (times[0], times[-1])
        # fewer events than the reservoir holds: the quantiles are of them all
        assert len(row[f"{side}t"]) == TIME_LEVELS - 1
        assert row[f"{side}t"] == sorted(row[f"{side}t"])
        assert times[0] <= row[f"{side}t"][0] and row[f"{side}t"][-1] <= times[-1]
        middle = row[f"{side}t"][TIME_LEVELS // 2 - 1]
        assert sum(t <= middle for t in times) == pytest.approx(len(times) / 2, abs=1)


def _region(records: list[ref.Record], region: Region) -> list[ref.Record]:
    def inside(r: ref.Record) -> bool:
        value = ref.get(r, region.key)
        return (
            region.from_ms <= r.system["_timestamp"] < region.to_ms
            and iref.canon(value)[0] == "number"
            and value is not None
            and region.low <= value <= region.high
        )

    return [r for r in records if inside(r)]


@pytest.mark.parametrize("name", sorted(BUBBLE_UP))
def test_bubble_up_case_counts_each_side_like_the_reference(
    name: str, store: Any, records: list[ref.Record]
) -> None:
    body = BUBBLE_UP[name][0]
    request = bubble_up_request(name)
    plan = bubble_up_plan(name)
    rows = store.query(plan.statement.sql, plan.statement.params, plan.statement.columns).rows
    answer = bubble_up_answer(plan, rows)
    query = {k: body[k] for k in ("namespaces", "filters", "needle") if k in body}
    if isinstance(request.selection, Region):
        matching = ref.select(records, query, FRM, TO)
        inside = {id(r) for r in _region(matching, request.selection)}
        chosen = [r for r in matching if id(r) in inside]
        rest = [r for r in matching if id(r) not in inside]
    else:
        chosen, rest = iref.sides(records, query, body["selection"], FRM, TO)
    # A side with windows is read within them: the shares are those of its events there.
    if plan.sides:
        assert (answer["selection"], answer["baseline"]) == plan.sides.counts
        chosen, rest = (
            [r for r in side if any(a <= r.system["_timestamp"] < b for a, b in windows)]
            if windows
            else side
            for side, windows in zip((chosen, rest), plan.sides.windows, strict=True)
        )
        assert answer["sampled"] is (name == "bubble_sampled")
    else:
        assert (answer["selection"], answer["baseline"]) == (len(chosen), len(rest))
    assert chosen and rest
    assert answer["sample"] == {"selection": len(chosen), "baseline": len(rest)}
    assert answer["dimensions"]
    for dimension in answer["dimensions"]:
        key = dimension["key"]
        assert key not in request.selection_keys()
        for v in dimension["values"]:
            assert v["selection"] == pytest.approx(iref.share(chosen, key, v["value"])), key
            assert v["baseline"] == pytest.approx(iref.share(rest, key, v["value"])), key
