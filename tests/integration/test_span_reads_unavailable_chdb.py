"""The reads that answer at once (trace search, the service overview, field values) answer
503 with Retry-After when they cannot: a read that waited past the queue's limit for a
worker, one past its deadline, one the engine refused."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from limelight.errors import StoreError, Unavailable
from limelight.query.plans import Timeframe
from limelight.query.traces import TraceSearch
from limelight.runs.investigate import field_values
from limelight.runs.limits import RunLimits
from limelight.runs.service import QueryRunService
from limelight.runs.spans import search_traces
from limelight.scoped import ScopedStatement
from limelight.settings import Settings
from limelight.store.events.base import QueryResult
from limelight.store.meta import repos
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant
from limelight.web.problems import error_response
from tests import query_reference as ref
from tests.held_store import HeldStore, PassingStore
from tests.support import migrated_sqlite

NOW = 1_795_000_000_000
SEARCH = TraceSearch.model_validate({"from": NOW - 3_600_000, "to": NOW})


class RefusingStore(PassingStore):
    """The engine answering every statement with an error of its own (out of memory)."""

    def read(self, statement: ScopedStatement) -> QueryResult:
        raise StoreError("Memory limit (for query) exceeded", code=241)


@pytest.fixture(scope="module")
def meta(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MetaDB]:
    db = migrated_sqlite(tmp_path_factory.mktemp("span-reads") / "meta.db")
    yield db
    db.dispose()


def _tenant(meta: MetaDB) -> Tenant:
    with meta.session(immediate=True) as s:
        ws = repos.create_workspace(s, f"span-reads-{time.time_ns()}")
        return Tenant(ws.id, repos.create_environment(s, ws, "prod", redact=False).id)


def _answered(exc: Unavailable) -> str:
    answer = error_response(exc)
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == "1"
    return exc.reason or ""


def test_a_read_that_waits_past_the_queue_limit_is_refused_with_retry_after(
    meta: MetaDB, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    store = HeldStore(ref.shared_chdb_store(tmp_path_factory))
    settings = Settings(
        data_dir=tmp_path,
        query_threads=1,
        query_max_queue_seconds=0.2,
        query_runs_per_minute=10**6,
    )
    runs = QueryRunService(settings, meta, store)
    tenant = _tenant(meta)
    runs.start()
    try:
        busy = runs.read(
            tenant, lambda deadline: search_traces(store, tenant, SEARCH, runs.limits, deadline)
        )
        store.wait_arrived(1)  # the first read holds the only worker
        waiting = runs.read(tenant, lambda deadline: "never run")
        # The worker is held past the queue's limit, then let go: the waiting read
        # starts too late and is refused instead of run.
        time.sleep(0.4)
        store.open()
        busy.result(30)
        with pytest.raises(Unavailable) as caught:
            waiting.result(30)
    finally:
        store.open()
        runs.close()
    assert "waited longer than 0.2 s" in _answered(caught.value)


def test_a_read_past_its_deadline_or_refused_by_the_engine_answers_503(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    engine = ref.shared_chdb_store(tmp_path_factory)
    limits = RunLimits.from_settings(Settings(data_dir=tmp_path))
    tenant = Tenant("ws_span_reads", "env_span_reads")
    with pytest.raises(Unavailable) as late:
        search_traces(engine, tenant, SEARCH, limits, time.monotonic() - 1)
    assert "longer than its limit" in _answered(late.value)
    with pytest.raises(Unavailable) as refused:
        search_traces(RefusingStore(engine), tenant, SEARCH, limits, time.monotonic() + 30)
    _answered(refused.value)


def test_field_values_past_their_deadline_or_refused_by_the_engine_answer_503(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    engine = ref.shared_chdb_store(tmp_path_factory)
    limits = RunLimits.from_settings(Settings(data_dir=tmp_path))
    tenant = Tenant("ws_span_reads", "env_span_reads")
    ref.store_events(engine, tenant, "values", [{"timestamp": NOW - 1000, "region": "eu"}])
    timeframe = Timeframe(NOW - 3_600_000, NOW)

    def values(store: Any, deadline: float) -> Any:
        return field_values(store, tenant, "values", "region", [], timeframe, 10, limits, deadline)

    assert values(engine, time.monotonic() + 30)["values"] == [
        {"value": "eu", "count": 1, "share": 1.0}
    ]
    with pytest.raises(Unavailable) as late:
        values(engine, time.monotonic() - 1)
    assert "longer than its limit" in _answered(late.value)
    with pytest.raises(Unavailable) as refused:
        values(RefusingStore(engine), time.monotonic() + 30)
    _answered(refused.value)
