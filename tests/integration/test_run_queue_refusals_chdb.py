"""A query run the run queue cannot take is refused with 503 and Retry-After, and counted
in /metrics by the reason it was refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from limelight import metrics
from limelight.errors import Unavailable
from limelight.query.spec import validate_fields
from limelight.runs import RunRequest
from limelight.runs.service import QUEUE_PER_THREAD, QUEUE_PER_WORKSPACE, QueryRunService
from limelight.settings import Settings
from limelight.store.meta import repos
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant
from limelight.web.problems import error_response
from tests import query_reference as ref
from tests.held_store import HeldStore
from tests.support import migrated_sqlite

NOW = 1_795_000_000_000
COUNT = validate_fields({"calculations": [{"operator": "COUNT"}]})
REFUSED = "limelight_query_runs_refused_total"


@pytest.fixture(scope="module")
def meta(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MetaDB]:
    db = migrated_sqlite(tmp_path_factory.mktemp("refusals") / "meta.db")
    yield db
    db.dispose()


def _tenant(meta: MetaDB, name: str) -> Tenant:
    with meta.session(immediate=True) as s:
        ws = repos.create_workspace(s, name)
        return Tenant(ws.id, repos.create_environment(s, ws, "prod", redact=False).id)


def _refused(reason: str) -> float:
    return REGISTRY.get_sample_value(REFUSED, {"reason": reason}) or 0.0


def _request() -> RunRequest:
    return RunRequest(COUNT, from_ms=NOW - 3_600_000, to_ms=NOW)


def _refusal(runs: QueryRunService, tenant: Tenant) -> Unavailable:
    with pytest.raises(Unavailable) as caught:
        runs.create(tenant, _request())
    answer = error_response(caught.value)
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == "1"
    return caught.value


def test_a_full_run_queue_refuses_with_retry_after_and_counts_each_reason(
    meta: MetaDB, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    store = HeldStore(ref.shared_chdb_store(tmp_path_factory))
    settings = Settings(
        data_dir=tmp_path,
        query_threads=2,
        query_threads_per_workspace=1,
        query_runs_per_minute=10**6,
    )
    runs = QueryRunService(settings, meta, store)
    tenants = [_tenant(meta, f"refusals-{n}") for n in range(3)]
    before = {reason: _refused(reason) for reason in ("workspace_queue_full", "queue_full")}
    runs.start()
    try:
        # One run of each of the first two workspaces holds a worker; the rest wait.
        for tenant in tenants[:2]:
            for _ in range(1 + QUEUE_PER_WORKSPACE):
                runs.create(tenant, _request())
        assert 2 * QUEUE_PER_WORKSPACE == 2 * QUEUE_PER_THREAD  # the server's bound: full too
        full = _refusal(runs, tenants[0])
        assert full.reason == "too many query runs of this workspace are waiting; try again"
        assert _refused("workspace_queue_full") == before["workspace_queue_full"] + 1
        # A third workspace has nothing waiting, but the server's queue is full.
        full = _refusal(runs, tenants[2])
        assert full.reason == "too many query runs are waiting; try again shortly"
        assert _refused("queue_full") == before["queue_full"] + 1
    finally:
        store.open()
        runs.close()
    stopping = _refused("stopping")
    closed = _refusal(runs, tenants[2])
    assert closed.reason == "query runs are not accepted while the server starts or stops"
    assert _refused("stopping") == stopping + 1


def test_every_reason_is_in_the_metrics_from_the_start() -> None:
    text = metrics.exposition()[0].decode()
    for reason in ("stopping", "workspace_queue_full", "queue_full"):
        assert f'{REFUSED}{{reason="{reason}"}}' in text
