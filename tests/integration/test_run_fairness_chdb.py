"""Workspaces share the query workers fairly, and a run's time limit counts from its start.

The engine is held: each statement waits until the test lets it go, so what is
asserted (the order in which runs reach the engine, which bound a run failed) does
not depend on how fast the machine is. ``bench/contention.py`` times a light run
beside a flood of heavy ones.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from limelight.query.spec import validate_fields
from limelight.runs import RunRequest
from limelight.runs.service import QueryRunService
from limelight.settings import Settings
from limelight.store.meta import repos
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant
from tests import query_reference as ref
from tests.held_store import HeldStore
from tests.support import migrated_sqlite

NOW = 1_795_000_000_000
HOUR = 3_600_000
FLOOD = 12
COUNT = validate_fields({"calculations": [{"operator": "COUNT"}]})


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
    found = {name: _tenant(meta, name) for name in ("flooding", "light")}
    for tenant in found.values():
        ref.store_events(store, tenant, "fair", [{"timestamp": NOW - 1000, "n": 1}] * 10)
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


def _create(runs: QueryRunService, store: HeldStore, tenant: Tenant, name: str) -> str:
    """A COUNT run named ``name`` at the engine (its own timeframe tells it apart)."""
    from_ms = NOW - HOUR + len(store.runs)
    store.runs[from_ms] = name
    return str(runs.create(tenant, RunRequest(COUNT, from_ms=from_ms, to_ms=NOW)).run["id"])


def test_another_workspaces_run_is_not_queued_behind_a_flood_of_runs(
    tenants: Any, tmp_path: Path
) -> None:
    """One worker; a workspace's run holds it and 12 more of its runs wait, then another
    workspace's run is created. The workers serve the workspaces with runs waiting in
    turns: the flooding workspace's turn comes first (its runs waited first), then the
    other's, so the light run reaches the engine after one of the 12, not after all of
    them as first come, first served would have it."""
    meta, store, found = tenants
    held = HeldStore(store)
    runs = _service(tmp_path, meta, held, query_threads=1, query_runs_per_minute=10_000)
    flooding, light = found["flooding"], found["light"]
    try:
        ids = [_create(runs, held, flooding, "A1")]
        assert held.wait_arrived(1) == ["A1"]  # it holds the one worker
        ids += [_create(runs, held, flooding, f"A{n}") for n in range(2, FLOOD + 2)]
        light_id = _create(runs, held, light, "B")
        held.release(FLOOD + 2)
        flood = [_finish(runs, flooding, run_id).run["status"] for run_id in ids]
        lit = _finish(runs, light, light_id)
    finally:
        held.release(100)
        runs.close()
    assert held.arrived == ["A1", "A2", "B", *(f"A{n}" for n in range(3, FLOOD + 2))]
    assert lit.run["status"] == "COMPLETED"
    assert orjson.loads(lit.data)["aggregates"][0]["values"]["COUNT"] == 10
    assert flood == ["COMPLETED"] * (FLOOD + 1)


def test_the_time_limit_counts_from_the_start_and_the_queue_has_its_own_bound(
    tenants: Any, tmp_path: Path
) -> None:
    """One worker, held by a run while the next waits: past the run time limit (2 s),
    it still runs and completes; past the queue's own bound (4 s), it fails for that
    without reaching the engine."""
    meta, store, found = tenants
    light = found["light"]
    held = HeldStore(store)
    runs = _service(
        tmp_path,
        meta,
        held,
        query_threads=1,
        query_runs_per_minute=10_000,
        query_max_run_seconds=2,
        query_max_queue_seconds=4,
    )
    try:
        views = {}
        for holding, waiting, wait in (("R1", "R2", 2.3), ("R3", "R4", 4.3)):
            arrived = len(held.arrived)
            ids = {holding: _create(runs, held, light, holding)}
            held.wait_arrived(arrived + 1)  # it holds the worker
            ids[waiting] = _create(runs, held, light, waiting)
            created = time.monotonic()
            time.sleep(max(0.0, created + wait - time.monotonic()))  # what it waits for
            held.release(2)
            views |= {name: _finish(runs, light, run_id).run for name, run_id in ids.items()}
    finally:
        held.release(100)
        runs.close()
    outcomes = {name: (v["status"], v.get("error")) for name, v in views.items()}
    took_longer = (
        "FAILED",
        "the query run took longer than its limit of 2 s; narrow the timeframe or add filters",
    )
    assert outcomes == {
        "R1": took_longer,  # held past its own limit
        "R2": ("COMPLETED", None),  # waited 2.3 s, longer than a run may take
        "R3": took_longer,
        "R4": (
            "FAILED",
            "the query run waited longer than 4 s for a free worker (the server is busy);"
            " try again shortly",
        ),
    }
    assert held.arrived == ["R1", "R2", "R3"]  # R4 never reached the engine
