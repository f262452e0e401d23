"""What the ingest accepts is stored on chDB: every time, every shape of keys."""

from __future__ import annotations

import json
import time
from typing import Any

import orjson
import pytest

from limelight.errors import BadRequest
from limelight.ingest.service import Origin, ingest_body
from limelight.query.compile import RunOptions, Timeframe
from limelight.query.spec import validate_fields
from limelight.runs.execute import run_once
from limelight.runs.limits import RunLimits
from limelight.runs.recent import newest_events
from limelight.settings import Settings
from limelight.store.events.base import INSERT_SETTINGS, PARSE_CHUNK_BYTES
from limelight.tenant import Tenant
from limelight.times import DAY_MS
from tests import query_reference as ref
from tests.unit.ingest.limits import limits

TENANT = Tenant("ws_times", "env_times")

LIMITS = RunLimits.from_settings(Settings())


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return ref.shared_chdb_store(tmp_path_factory)


@pytest.mark.parametrize(
    ("sent", "stored_ms"),
    [
        (946_684_800_000, 946_684_800_000),  # 2000-01-01, the earliest time kept
        ("2000-06-01T12:00:00.250Z", 959_860_800_250),
        (999_999_999_999, 999_999_999_999),  # 2001-09-09, the last 12-digit millisecond
        (1_000_000_000_000, 1_000_000_000_000),
        (1_795_000_000_123, 1_795_000_000_123),
    ],
)
def test_event_times_are_stored_to_the_millisecond(store: Any, sent: Any, stored_ms: int) -> None:
    # Times before 2001-09-09 (12 digits of milliseconds) failed the whole batch with a 500:
    # the engine reads a bare 12-digit number as a date and time, not as milliseconds.
    dataset = f"t{stored_ms}"
    body = orjson.dumps([{"timestamp": sent, "n": 1}, {"n": 2}])
    outcome = ingest_body(store, Origin(TENANT, dataset), body, limits())
    assert outcome.accepted == 2
    stored = [e for e in _stored(store, dataset) if e["n"] == 1]
    assert [e["_timestamp"] for e in stored] == [stored_ms]


def _stored(store: Any, dataset: str) -> list[Any]:
    """The dataset's events as stored, newest first, parsed."""
    events = newest_events(store, TENANT, dataset, 10_000, LIMITS)
    return [json.loads(orjson.dumps(e)) for e in events]


def _data(store: Any, dataset: str, columns: str) -> list[Any]:
    """``columns`` of the dataset's stored rows (paths of `data`), in the order of data.n."""
    return list(
        store.query(
            f"SELECT {columns} FROM {store.table} WHERE workspace_id = {{ws:String}}"
            " AND dataset = {ds:String} ORDER BY data.n.:Int64",
            {"ws": TENANT.workspace_id, "ds": dataset},
        ).rows
    )


def test_an_event_naming_one_path_twice_is_stored_and_its_first_value_counts(store: Any) -> None:
    # {"a.b": 1, "a": {"b": 2}} names the path a.b twice; the engine refused the INSERT,
    # and with it the whole batch, with a 500.
    events = [{"n": 1, "a.b": 1, "a": {"b": 2}}, {"n": 2, "x": {"a": {"b": None}, "a.b": 3}}]
    outcome = ingest_body(store, Origin(TENANT, "twice"), orjson.dumps(events), limits())
    assert outcome.accepted == 2
    stored = sorted(_stored(store, "twice"), key=lambda e: e["n"])
    assert [{k: e[k] for k in e if not k.startswith("_")} for e in stored] == events
    rows = _data(store, "twice", "data.a.b.:Int64 AS first, data.x.a.b.:Int64 AS only")
    assert rows == [{"first": 1, "only": None}, {"first": None, "only": 3}]


def test_a_batch_spanning_more_than_a_hundred_days_is_stored(store: Any) -> None:
    # The engine refuses an INSERT touching more than 100 day partitions: a backfill of
    # a year in one batch got a 500. Its 100 days, one every other day, take two.
    events = [{"timestamp": 1_000_000_000_000 + i * 2 * DAY_MS, "n": i} for i in range(100)]
    outcome = ingest_body(store, Origin(TENANT, "backfill"), orjson.dumps(events), limits())
    assert outcome.accepted == 100
    stored = _stored(store, "backfill")
    assert sorted((e["n"], e["_timestamp"]) for e in stored) == [
        (e["n"], e["timestamp"]) for e in events
    ]


def test_a_batch_falling_on_more_than_a_hundred_days_is_refused_whole(store: Any) -> None:
    # Each day is a part of its own: 2,000 events on 2,000 days held every tenant's inserts.
    events = [{"timestamp": 1_000_000_000_000 + i * DAY_MS, "n": i} for i in range(101)]
    with pytest.raises(BadRequest) as refused:
        ingest_body(store, Origin(TENANT, "spread"), orjson.dumps(events), limits())
    assert refused.value.reason == (
        "a request's events fall on at most 100 days (UTC); this one's fall on 101:"
        " send them in requests of fewer days"
    )
    assert _stored(store, "spread") == []


def test_a_body_of_several_parsing_chunks_keeps_each_event_with_its_own_data(store: Any) -> None:
    # The engine parses an INSERT's text on several threads, in chunks of PARSE_CHUNK_BYTES:
    # every event must come back once, whole, and its `data` must be its own.
    events = [
        {
            "n": i,
            "text": f'line {i}\n\ttab \\ back "quoted" é ✓ {"x" * (i % 600)}',
            "nested": {"list": [i, str(i), i % 2 == 0, None], "big": 2**70 + i},
            f"key{i % 40}": i,
        }
        for i in range(9_000)
    ]
    body = json.dumps(events, ensure_ascii=False).encode()
    # The INSERT's text (raw and data: about twice the JSON) spans several chunks.
    assert INSERT_SETTINGS["min_chunk_bytes_for_parallel_parsing"] == PARSE_CHUNK_BYTES
    assert len(body) > 3 * PARSE_CHUNK_BYTES
    outcome = ingest_body(store, Origin(TENANT, "chunks"), body, limits())
    assert outcome.accepted == len(events)
    stored = sorted(_stored(store, "chunks"), key=lambda e: e["n"])
    assert [{k: e[k] for k in e if not k.startswith("_")} for e in stored] == events
    rows = _data(store, "chunks", "data.n.:Int64 AS n, data.text.:String AS text")
    assert rows == [{"n": e["n"], "text": e["text"]} for e in events]


def test_every_type_a_path_is_stored_as_in_a_body_of_several_chunks_is_recorded_and_queried(
    store: Any,
) -> None:
    # The engine types a path's arrays per parsed chunk: where one array mixes kinds,
    # the arrays of that path near it are Array(Dynamic), the others stay typed. The
    # keys and the compiler read only the recorded types, so each must be recorded.
    dataset = "mixed-arrays"
    events = [
        {"n": i, "arr": [i, "s"] if i % 7 == 0 else [i], "pad": "x" * 400} for i in range(9_000)
    ]
    body = orjson.dumps(events)
    assert len(body) > 3 * PARSE_CHUNK_BYTES
    assert ingest_body(store, Origin(TENANT, dataset), body, limits()).accepted == len(events)
    scope = {"ws": TENANT.workspace_id, "ds": dataset}
    stored = store.query(
        f"SELECT DISTINCT dynamicType(data.arr) AS type FROM {store.table}"
        " WHERE workspace_id = {ws:String} AND dataset = {ds:String}",
        scope,
    ).rows
    recorded = store.query(
        f"SELECT DISTINCT type FROM {store.paths_table} WHERE workspace_id = {{ws:String}}"
        " AND dataset = {ds:String} AND path = 'arr'",
        scope,
    ).rows
    # The premise: some chunks typed the path's arrays, others could not.
    assert {r["type"] for r in stored} == {"Array(Dynamic)", "Array(Nullable(Int64))"}
    assert {r["type"] for r in stored} <= {r["type"] for r in recorded}
    # Values of every chunk, held in typed arrays and in Array(Dynamic) ones.
    wanted = {"s": len(range(0, 9_000, 7)), 0: 1, 1: 1, 4_500: 1, 7_000: 1, 8_999: 1}
    assert {value: _count_including(store, dataset, value) for value in wanted} == wanted


def _count_including(store: Any, dataset: str, value: object) -> int:
    """COUNT of the dataset's events whose ``arr`` includes ``value``, run as an alert
    check runs it: reading only the types recorded for ``arr``."""
    now = int(time.time() * 1000)
    fields = validate_fields(
        {
            "calculations": [{"operator": "COUNT"}],
            "filters": [{"key": "arr", "operation": "INCLUDES", "value": value}],
            "namespaces": [{"type": "dataset", "value": dataset}],
        }
    )
    frame = Timeframe(now - 3_600_000, now + 3_600_000)
    data = run_once(store, TENANT, fields, frame, RunOptions(), LIMITS)
    return int(data["aggregates"][0]["values"]["COUNT"])
