"""Field values and BubbleUp on chDB, against an independent evaluation in plain Python.

The reference reads the events as sent (``tests.query_reference``): a key's
values are its scalar, or the distinct elements of its array; numbers are one
kind (5 and 5.0), booleans are not numbers, "5" is not 5.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from limelight.query.bubble_up_sample import SIDE_SAMPLE
from limelight.query.bubble_up_spec import validate_bubble_up
from limelight.query.field_values import compile_field_values, field_values_answer
from limelight.query.keys import StoredTypes
from limelight.query.plans import Timeframe
from limelight.query.scope import Scope
from limelight.query.spec import validate_fields
from limelight.runs.investigate import bubble_up, field_values
from limelight.runs.limits import RunLimits
from limelight.runs.lookups import stored_types
from limelight.settings import Settings
from limelight.tenant import Tenant
from tests import investigate_reference as iref
from tests import query_reference as ref

TENANT = Tenant("ws_investigate", "env_investigate")
# Another environment of the same workspace: its events are never part of an answer.
SAME_WORKSPACE = Tenant("ws_investigate", "env_neighbour")
NOW_MS = 1_795_003_600_000
FRAME = Timeframe(NOW_MS - 3_600_000, NOW_MS)
LIMITS = RunLimits.from_settings(Settings())
DATASET = "checkout"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield ref.shared_chdb_store(tmp_path_factory)


@pytest.fixture(scope="module")
def records(store: Any) -> list[ref.Record]:
    events = ref.generate_events(1500, seed=11, now_ms=NOW_MS - 1, span_ms=3_600_000)
    stored = ref.store_events(store, TENANT, DATASET, events[:1200])
    ref.store_events(store, TENANT, "other-dataset", events[1200:])
    neighbour = [{**e, "service": "neighbour-only", "status": "neighbour"} for e in events[:300]]
    ref.store_events(store, SAME_WORKSPACE, DATASET, neighbour)
    return stored


def reference_values(
    records: list[ref.Record], key: str, filters: list[dict[str, Any]], frame: Timeframe
) -> tuple[Counter[tuple[str, Any]], int]:
    query = {"namespaces": [{"type": "dataset", "value": DATASET}], "filters": filters}
    return iref.top_values(records, query, key, frame.from_ms, frame.to_ms)


KEYS = [
    "status",
    "tags",
    "duration",
    "_service",
    "_namespace",
    "http.method",
    "data.http.status",
    "when",
    "ratio",
    "ok",
    "requestId",
    "we`ird\\key.sp ace",
    "data",
    "nowhere",
]
FILTER_SETS: list[list[dict[str, Any]]] = [
    [],
    [{"key": "duration", "operation": ">", "value": 1000}],
    [{"key": "tags", "operation": "INCLUDES", "value": "red"}],
    [{"key": "status", "operation": "!=", "value": 200}],
]


@pytest.mark.parametrize("filters", FILTER_SETS, ids=lambda f: json.dumps(f))
@pytest.mark.parametrize("key", KEYS)
def test_a_keys_values_are_counted_as_the_reference_counts_them(
    store: Any, records: list[ref.Record], key: str, filters: list[dict[str, Any]]
) -> None:
    parsed = validate_fields({"filters": filters}).filters or []
    answer = field_values(
        store, TENANT, DATASET, key, parsed, FRAME, 100, LIMITS, time.monotonic() + 30
    )
    counts, events = reference_values(records, key, filters, FRAME)
    assert answer["key"] == key
    assert answer["events"] == events
    assert answer["distinct"] == len(counts)
    assert answer["sampled"] is False
    got = {iref.canon(v["value"]): v["count"] for v in answer["values"]}
    assert all(counts[value] == n for value, n in got.items())
    assert sorted(got.values(), reverse=True) == sorted(counts.values(), reverse=True)[:100]
    for v in answer["values"]:
        assert v["share"] == v["count"] / events
    assert [v["count"] for v in answer["values"]] == sorted(got.values(), reverse=True)


def test_values_of_another_environment_of_the_workspace_are_never_counted(
    store: Any, records: list[ref.Record]
) -> None:
    for key, foreign in (("_service", "neighbour-only"), ("status", "neighbour")):
        answer = field_values(
            store, TENANT, DATASET, key, [], FRAME, 100, LIMITS, time.monotonic() + 30
        )
        assert foreign not in [v["value"] for v in answer["values"]]
    mine = field_values(
        store, SAME_WORKSPACE, DATASET, "_service", [], FRAME, 100, LIMITS, time.monotonic() + 30
    )
    assert [v["value"] for v in mine["values"]] == ["neighbour-only"]


def test_over_more_events_than_it_reads_the_answer_is_over_the_newest_and_says_so(
    store: Any,
) -> None:
    tenant = Tenant("ws_investigate", "env_sampled")
    rnd = random.Random(3)
    events = [
        {"timestamp": FRAME.from_ms + i * 1000, "color": rnd.choice(["red", "blue", "green"])}
        for i in range(400)
    ]
    ref.store_events(store, tenant, DATASET, events)
    scope = Scope(tenant.workspace_id, tenant.environment_id, LIMITS.run_options())
    stored = StoredTypes(stored_types(store, tenant, ["color"], LIMITS))
    # Every event read is not a sample, though as many as the sample (400).
    for sample, sampled in ((100, True), (400, False), (401, False)):
        plan = compile_field_values(
            scope, store.table, DATASET, "color", [], FRAME, stored, 10, sample
        )
        held = store.query(plan.events.sql, plan.events.params).rows[0]["events"]
        assert held == 400
        # The newest from more than the sample (100); every event, in no order, else.
        read = plan.read(held)
        assert (read is plan.statement) == (sample < 400)
        rows = store.query(read.sql, read.params).rows
        answer = field_values_answer(plan, rows, read)
        newest = Counter(e["color"] for e in events[-min(sample, 400) :])
        assert {v["value"]: v["count"] for v in answer["values"]} == dict(newest)
        assert answer["events"] == min(sample, 400)
        assert answer["sampled"] is sampled


# ---------------------------------------------------------------- BubbleUp


def _bubble_up(tenant: Tenant, body: dict[str, Any], store: Any) -> dict[str, Any]:
    request = validate_bubble_up(json.dumps(body).encode())
    return bubble_up(store, tenant, request, LIMITS, time.monotonic() + 60)


REGIONS = ["eu-west-1", "eu-west-2", "us-east-1", "us-west-2", "ap-south-1", "sa-east-1"]
PLANS = ["free", "pro", "team"]
NOISE = [[f"v{j}" for j in range(2 + i % 5)] for i in range(20)]


def planted_requests(count: int, seed: int) -> list[dict[str, Any]]:
    """Requests whose slow 3% are exactly those of eu-west-2 on the free plan, among 20
    keys of noise of similar cardinality (2 to 6 values)."""
    rnd = random.Random(seed)
    out = []
    for i in range(count):
        slow = i % 100 < 3
        if slow:
            region, plan = "eu-west-2", "free"
        else:
            region = rnd.choice(REGIONS)
            plan = rnd.choice(["pro", "team"] if region == "eu-west-2" else PLANS)
        event: dict[str, Any] = {
            "timestamp": FRAME.from_ms + rnd.randrange(3_600_000),
            "region": region,
            "plan": plan,
            "duration": rnd.uniform(1000, 3000) if slow else rnd.uniform(5, 900),
        }
        for j, values in enumerate(NOISE):
            event[f"noise{j}"] = rnd.choice(values)
        out.append(event)
    return out


def test_bubble_up_finds_the_planted_cause_of_the_slow_requests(store: Any) -> None:
    tenant = Tenant("ws_investigate", "env_planted")
    events = planted_requests(100_000, seed=5)
    for start in range(0, len(events), 20_000):
        ref.store_events(store, tenant, "requests", events[start : start + 20_000])
    durations = sorted(e["duration"] for e in events)
    p97 = durations[int(len(durations) * 0.97) - 1]
    body = {
        "namespaces": [{"type": "dataset", "value": "requests"}],
        "from": FRAME.from_ms,
        "to": FRAME.to_ms,
        "selection": {"filters": [{"key": "duration", "operation": ">", "value": p97}]},
    }
    started = time.perf_counter()
    answer = _bubble_up(tenant, body, store)
    elapsed = time.perf_counter() - started
    # The baseline holds more than a side's sample: about SIDE_SAMPLE of it is read.
    assert answer["selection"] == 3000 and answer["baseline"] == 97_000
    assert answer["sampled"] is True and answer["sample"]["selection"] == 3000
    assert abs(answer["sample"]["baseline"] - SIDE_SAMPLE) < 0.1 * SIDE_SAMPLE
    first, second = answer["dimensions"][:2]
    assert (first["key"], second["key"]) == ("region", "plan"), answer["dimensions"][:3]
    fast = [e for e in events if e["duration"] <= p97]
    # The sample's share is the whole baseline's within its error (about 0.004 here).
    assert first["values"][0] == {
        "value": "eu-west-2",
        "selection": 1.0,
        "baseline": pytest.approx(sum(e["region"] == "eu-west-2" for e in fast) / 97_000, abs=0.02),
    }
    assert max(first["values"], key=lambda v: v["selection"])["value"] == "eu-west-2"
    assert max(second["values"], key=lambda v: v["selection"])["value"] == "free"
    assert "duration" not in [d["key"] for d in answer["dimensions"]]  # the selection's key
    noise = [d["score"] for d in answer["dimensions"] if d["key"].startswith("noise")]
    assert len(noise) == 20 and max(noise) < 0.1 < second["score"]
    assert _bubble_up(tenant, body, store) == answer  # the same events, the same answer
    print(f"BubbleUp over 100,000 events, 23 keys: {elapsed:.2f} s")


def test_bubble_up_shares_are_the_shares_of_each_side_as_the_reference_counts_them(
    store: Any, records: list[ref.Record]
) -> None:
    query = {
        "namespaces": [{"type": "dataset", "value": DATASET}],
        "filters": [{"key": "status", "operation": "EXISTS"}],
    }
    selection = {"filters": [{"key": "http.method", "operation": "IN", "value": ["GET", "get"]}]}
    answer = _bubble_up(
        TENANT, {**query, "from": FRAME.from_ms, "to": FRAME.to_ms, "selection": selection}, store
    )
    chosen, rest = iref.sides(records, query, selection, FRAME.from_ms, FRAME.to_ms)
    assert (answer["selection"], answer["baseline"]) == (len(chosen), len(rest))
    keys = {d["key"] for d in answer["dimensions"]}
    assert "http.method" not in keys and {"_service", "status", "duration"} <= keys
    for dimension in answer["dimensions"]:
        for v in dimension["values"]:
            key, value = dimension["key"], v["value"]
            assert v["selection"] == pytest.approx(iref.share(chosen, key, value)), (key, value)
            assert v["baseline"] == pytest.approx(iref.share(rest, key, value)), (key, value)
    # A key of few values, each common: the score is the exact total variation distance.
    service = next(d for d in answer["dimensions"] if d["key"] == "_service")
    services = {r.system["_service"] for r in chosen + rest}
    differences = [
        iref.share(chosen, "_service", s) - iref.share(rest, "_service", s) for s in services
    ]
    exact = sum(abs(d) for d in differences)
    assert service["score"] == pytest.approx(exact / 2, abs=1e-6)
    assert all("neighbour" not in json.dumps(d["values"]) for d in answer["dimensions"])


def test_a_region_selects_a_time_range_and_a_range_of_a_number(
    store: Any, records: list[ref.Record]
) -> None:
    middle = FRAME.from_ms + 1_800_000
    region = {"from": middle, "to": FRAME.to_ms, "key": "duration", "min": 100, "max": 2000}
    query = {"namespaces": [{"type": "dataset", "value": DATASET}]}
    answer = _bubble_up(
        TENANT, {**query, "from": FRAME.from_ms, "to": FRAME.to_ms, "selection": region}, store
    )
    in_region = [
        r
        for r in ref.select(records, query, FRAME.from_ms, FRAME.to_ms)
        if middle <= r.system["_timestamp"]
        and iref.canon(ref.get(r, "duration"))[0] == "number"
        and ref.get(r, "duration") is not None
        and 100 <= ref.get(r, "duration") <= 2000
    ]
    total = len(ref.select(records, query, FRAME.from_ms, FRAME.to_ms))
    assert (answer["selection"], answer["baseline"]) == (len(in_region), total - len(in_region))
    assert "duration" not in {d["key"] for d in answer["dimensions"]}
