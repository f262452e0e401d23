"""Stored run results stay within their budget, per workspace and in all.

A flood of large runs must not fill the disk: once a new result would pass a
budget, the oldest results are dropped (those already read first), and a run
whose result was dropped answers that it expired.
"""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from limelight.errors import Gone
from limelight.query.spec import validate_fields
from limelight.runs import RunRequest
from limelight.runs.service import QueryRunService
from limelight.settings import MIB, Settings
from limelight.store.meta import repos
from limelight.store.meta import runs_repo as repo
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow
from limelight.store.meta.queries_models import QueryRun
from limelight.tenant import Tenant
from tests import query_reference as ref
from tests.support import migrated_sqlite

NOW = 1_795_000_000_000
KB = 1024


def _tenant(db: MetaDB) -> Tenant:
    with db.session(immediate=True) as s:
        ws = repos.create_workspace(s, f"ws-{uuid.uuid4().hex[:8]}")
        return Tenant(ws.id, repos.create_environment(s, ws, "prod", redact=False).id)


def _finished_run(db: MetaDB, tenant: Tenant, size: int, budget: repo.ResultBudget) -> str:
    run_id = uuid.uuid4().hex
    with db.connection(immediate=True) as c:
        repo.add_run(
            c,
            QueryRun(
                id=run_id,
                workspace_id=tenant.workspace_id,
                environment_id=tenant.environment_id,
                fields={},
                from_ms=0,
                to_ms=1,
                status=repo.STARTED,
                created_at=utcnow(),
            ),
        )
    with db.connection(immediate=True) as c:
        repo.finish_run(c, run_id, repo.COMPLETED, result="x" * size, budget=budget)
    return run_id


def _kept(db: MetaDB, tenant: Tenant) -> dict[str, int]:
    with db.session() as s:
        runs = s.query(QueryRun).filter(QueryRun.workspace_id == tenant.workspace_id).all()
        return {r.id: len(r.result or "") for r in runs if r.result is not None}


def test_the_oldest_results_go_first_and_read_ones_before_unread(db: MetaDB) -> None:
    tenant = _tenant(db)
    budget = repo.ResultBudget(per_workspace=100 * KB, total=10 * MIB)
    first, second, third = (_finished_run(db, tenant, 30 * KB, budget) for _ in range(3))
    with db.connection(immediate=True) as c:
        repo.mark_read(c, second)
    fourth = _finished_run(db, tenant, 30 * KB, budget)  # 120 KB: one must go, the read one
    assert set(_kept(db, tenant)) == {first, third, fourth}
    fifth = _finished_run(db, tenant, 30 * KB, budget)  # then the oldest unread
    assert set(_kept(db, tenant)) == {third, fourth, fifth}
    with db.connection() as c:
        assert repo.result_usage(c, tenant.workspace_id) == 90 * KB


def test_the_server_budget_holds_across_workspaces(db: MetaDB) -> None:
    a, b = _tenant(db), _tenant(db)
    with db.connection() as c:
        before = repo.result_usage(c)
    budget = repo.ResultBudget(per_workspace=130 * KB, total=before + 150 * KB)
    for _ in range(4):
        _finished_run(db, a, 40 * KB, budget)
    for _ in range(3):
        _finished_run(db, b, 40 * KB, budget)
    with db.connection() as c:
        assert repo.result_usage(c) - before <= 150 * KB
        assert repo.result_usage(c, a.workspace_id) == sum(_kept(db, a).values())
        assert repo.result_usage(c, b.workspace_id) == sum(_kept(db, b).values())
    assert len(_kept(db, a)) == 0  # a's went first, being the oldest
    assert len(_kept(db, b)) == 3


def test_purging_old_runs_gives_their_bytes_back(db: MetaDB) -> None:
    tenant = _tenant(db)
    budget = repo.ResultBudget(per_workspace=MIB, total=100 * MIB)
    _finished_run(db, tenant, 10 * KB, budget)
    with db.connection(immediate=True) as c:
        repo.purge_runs(c, utcnow())
        assert repo.result_usage(c, tenant.workspace_id) == 0


# -- through the run service, on the engine ------------------------------------------------

QUERY = validate_fields({"limit": 1000})


def _settle(runs: QueryRunService, tenant: Tenant, run_id: str) -> Any:
    done = threading.Event()
    if runs.watch(tenant, run_id, done.set) > 0:
        done.wait(30)
    return runs.get(tenant, run_id)


def _stored_status(meta: MetaDB, tenant: Tenant, run_id: str) -> str:
    with meta.session() as s:
        return repo.get_run(s, tenant, run_id).status


def test_a_flood_of_large_runs_stays_within_the_budget(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    db_path = tmp_path / "meta.db"
    meta = migrated_sqlite(db_path)
    tenant = _tenant(meta)
    store = ref.shared_chdb_store(tmp_path_factory)
    padding = "p" * 400
    ref.store_events(
        store, tenant, "big", [{"timestamp": NOW - 1000 - i, "pad": padding} for i in range(1000)]
    )
    settings = Settings(
        data_dir=tmp_path,
        query_results_max_bytes_per_workspace=MIB,
        query_runs_per_minute=10_000,
    )
    runs = QueryRunService(settings, meta, store)
    runs.start()
    request = RunRequest(QUERY, from_ms=NOW - 60_000, to_ms=NOW, limit=1000)
    try:
        ids = [runs.create(tenant, request).run["id"] for _ in range(30)]
        sizes = {len(_settle(runs, tenant, run_id).data or b"") for run_id in ids}
        # Outcomes reach the database just after the answers: wait for all of them.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(
            _stored_status(meta, tenant, run_id) == "STARTED" for run_id in ids
        ):
            time.sleep(0.01)
    finally:
        runs.close()
    assert min(sizes) > 400 * KB  # 30 results of 0.45 MB: 13 MB without a budget
    with meta.connection() as c:
        held = repo.result_usage(c, tenant.workspace_id)
    assert 0 < held <= MIB
    assert sum(_kept(meta, tenant).values()) == held
    # Another process (or this one after a restart) reads the records: the result
    # that finished last is there, the first answers that it expired.
    reader = QueryRunService(settings, meta, store)
    with meta.session() as s:
        last = max(
            s.query(QueryRun).filter(QueryRun.workspace_id == tenant.workspace_id),
            key=lambda r: r.finished_at or utcnow(),
        )
    assert reader.get(tenant, last.id).data is not None
    with pytest.raises(Gone, match="expired"):
        reader.get(tenant, ids[0])
    print(
        f"budget: 30 results of {min(sizes) // KB} KB; stored {held // KB} KB;"
        f" metadata file {db_path.stat().st_size // KB} KB"
    )
    assert db_path.stat().st_size < 4 * MIB
    meta.dispose()
