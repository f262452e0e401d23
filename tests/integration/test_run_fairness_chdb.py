"""Workspaces share the query workers fairly, and a run's time limit counts from its start.

One workspace floods heavy runs (regex needles over 300,000 events); another
workspace's light run must still answer within a second, as it would on an idle
server, while a third floods tiny ingests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from limelight.query.spec import validate_fields
from limelight.runs import RunRequest
from limelight.runs.service import QueryRunService
from limelight.settings import Settings
from limelight.store.events.base import JSON_PARSE_SETTINGS, settings_clause
from limelight.store.meta import repos
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant
from tests import query_reference as ref
from tests.support import migrated_sqlite

NOW = 1_795_000_000_000
HOUR = 3_600_000
HEAVY_EVENTS = 300_000

# Grouping 300,000 distinct messages with exact medians: about 0.05 s of both cores.
HEAVY = validate_fields(
    {
        "group_bys": [{"key": "message"}],
        "calculations": [
            {"operator": "MEDIAN", "key": "n"},
            {"operator": "COUNT_DISTINCT", "key": "n"},
        ],
        "limit": 10,
    }
)
HEAVY_RUNS = 12
LIGHT = validate_fields({"calculations": [{"operator": "COUNT"}]})

FILL = (
    "INSERT INTO {table} (workspace_id, environment_id, dataset, service, namespace,"
    " timestamp, id, raw) SETTINGS "
    + settings_clause({"async_insert": 0, **JSON_PARSE_SETTINGS})
    + " SELECT {{ws:String}}, {{env:String}}, 'heavy', 'svc', 'default',"
    " fromUnixTimestamp64Milli(toInt64({{start:Int64}} + number * 10)), toString(number),"
    ' concat(\'{{"message":"slow request \', toString(number),'
    " '\",\"n\":', toString(number), '}}')"
    " FROM numbers({{rows:UInt64}})"
)


def _tenant(meta: MetaDB, name: str) -> Tenant:
    with meta.session(immediate=True) as s:
        ws = repos.create_workspace(s, name)
        return Tenant(ws.id, repos.create_environment(s, ws, "prod", redact=False).id)


@pytest.fixture(scope="module")
def tenants(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[MetaDB, Any, dict[str, Tenant]]]:
    meta = migrated_sqlite(tmp_path_factory.mktemp("fair") / "meta.db")
    store = ref.shared_chdb_store(tmp_path_factory)
    found = {name: _tenant(meta, name) for name in ("heavy", "light", "ingest")}
    heavy = found["heavy"]
    store.command(
        FILL.format(table=store.table),
        {
            "ws": heavy.workspace_id,
            "env": heavy.environment_id,
            "start": NOW - HOUR,
            "rows": HEAVY_EVENTS,
        },
    )
    ref.store_events(store, found["light"], "light", [{"timestamp": NOW - 1000, "n": 1}] * 10)
    yield meta, store, found
    meta.dispose()


def _service(tmp_path: Path, meta: MetaDB, store: Any, **settings: Any) -> QueryRunService:
    runs = QueryRunService(Settings(data_dir=tmp_path, **settings), meta, store)
    runs.start()
    return runs


def _finish(runs: QueryRunService, tenant: Tenant, run_id: str, timeout: float = 60) -> Any:
    done = threading.Event()
    if runs.watch(tenant, run_id, done.set) > 0:
        done.wait(timeout)
    return runs.get(tenant, run_id)


def _request(fields: Any) -> RunRequest:
    return RunRequest(fields, from_ms=NOW - HOUR, to_ms=NOW)


def test_a_light_run_is_not_queued_behind_a_flood_of_heavy_runs(
    tenants: Any, tmp_path: Path
) -> None:
    meta, store, found = tenants
    runs = _service(tmp_path, meta, store, query_runs_per_minute=10_000)
    heavy, light = found["heavy"], found["light"]
    stop = threading.Event()

    def flood_ingest() -> None:  # a third workspace sending tiny batches without pause
        while not stop.is_set():
            ref.store_events(store, found["ingest"], "tiny", [{"n": 1}])

    try:
        one_heavy = time.perf_counter()
        _finish(runs, heavy, runs.create(heavy, _request(HEAVY)).run["id"])
        one_heavy = time.perf_counter() - one_heavy
        with ThreadPoolExecutor(2) as ingest:
            for _ in range(2):
                ingest.submit(flood_ingest)
            heavy_ids = [runs.create(heavy, _request(HEAVY)).run["id"] for _ in range(HEAVY_RUNS)]
            waits = []
            for _ in range(5):
                started = time.perf_counter()
                view = _finish(runs, light, runs.create(light, _request(LIGHT)).run["id"])
                waits.append(time.perf_counter() - started)
                assert view.run["status"] == "COMPLETED"
            stop.set()
        statuses = {_finish(runs, heavy, run_id).run["status"] for run_id in heavy_ids}
    finally:
        stop.set()
        runs.close()
    print(f"fairness: one heavy run alone {one_heavy:.2f} s; light runs beside the flood {waits}")
    # First come, first served, it would have waited for every heavy run queued before it
    # (each takes both cores alone, so running them side by side saves nothing).
    assert one_heavy * HEAVY_RUNS > 1.5, "the heavy runs are too light to show anything"
    # Within a second, or a quarter of that wait where the machine is so slow (or so
    # busy with the suite's other processes) that the heavy runs alone take over 4 s.
    assert max(waits) < max(1.0, one_heavy * HEAVY_RUNS / 4)
    assert statuses == {"COMPLETED"}


class SlowStore:
    """The engine, each statement taking a fixed extra time: run times that do not
    depend on how busy the machine is."""

    def __init__(self, store: Any, seconds: float) -> None:
        self.store, self.seconds = store, seconds
        self.table, self.paths_table = store.table, store.paths_table

    def query(self, *args: Any) -> Any:
        time.sleep(self.seconds)
        return self.store.query(*args)


def test_the_time_limit_counts_from_the_start_and_the_queue_has_its_own_bound(
    tenants: Any, tmp_path: Path
) -> None:
    meta, store, found = tenants
    light = found["light"]
    # Each run takes this long; run k waits (k - 1) steps for the one worker. A second
    # leaves room for a machine busy with the rest of the suite: the fourth run starts
    # within the queue bound as long as each run's own work (its statement and its
    # record) takes under 0.83 s; half-second steps left it 0.42 s.
    step = 1.0
    runs = _service(
        tmp_path,
        meta,
        SlowStore(store, step),
        query_threads=1,
        query_runs_per_minute=10_000,
        # Wide margins: a busy machine adds its own time to every step.
        query_max_run_seconds=2.5 * step,  # the fourth run waits 3 steps, and completes
        query_max_queue_seconds=5.5 * step,  # the last three wait 9 to 11 steps, and fail
    )
    try:
        ids = [runs.create(light, _request(LIGHT)).run["id"] for _ in range(12)]
        views = [_finish(runs, light, run_id) for run_id in ids]
    finally:
        runs.close()
    statuses = [v.run["status"] for v in views]
    assert statuses[:4] == ["COMPLETED"] * 4, statuses
    assert statuses[-3:] == ["FAILED"] * 3, statuses
    assert all(f"waited longer than {5.5 * step:g} s" in v.run["error"] for v in views[-3:])
    assert all("took longer" not in (v.run.get("error") or "") for v in views)
