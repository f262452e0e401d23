"""A run's record: written before its id is returned, while the run executes; the outcome after."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from limelight.errors import NotFound
from limelight.query.spec import validate_fields
from limelight.runs import RunRequest
from limelight.runs import service as service_module
from limelight.runs.service import QueryRunService
from limelight.scoped import ScopedStatement
from limelight.settings import Settings
from limelight.store.events.base import EventStore, QueryResult
from limelight.store.meta import repos
from limelight.store.meta import runs_repo as repo
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant
from tests import query_reference as ref
from tests.held_store import PassingStore
from tests.support import migrated_sqlite

NOW = 1_795_000_000_000


class GatedStore(PassingStore):
    """The engine, with each statement held until the test opens the gate."""

    def __init__(self, store: EventStore) -> None:
        super().__init__(store)
        self.gate = threading.Event()
        self.gate.set()

    def read(self, statement: ScopedStatement) -> QueryResult:
        assert self.gate.wait(30), "the test never opened the gate"
        return self.store.read(statement)


@pytest.fixture
def service(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    meta = migrated_sqlite(tmp_path / "meta.db")
    with meta.session(immediate=True) as s:
        workspace = repos.create_workspace(s, "records")
        tenant = Tenant(
            workspace.id, repos.create_environment(s, workspace, "prod", redact=False).id
        )
    engine = ref.shared_chdb_store(tmp_path_factory)
    ref.store_events(engine, tenant, "records", [{"timestamp": NOW - 1000, "n": 1}])
    store = GatedStore(engine)
    # One worker: a worker left waiting would hold up every later run.
    runs = QueryRunService(Settings(data_dir=tmp_path, query_threads=1), meta, store)
    runs.start()
    yield runs, meta, tenant, store
    runs.close()
    meta.dispose()


def _request() -> RunRequest:
    return RunRequest(validate_fields({}), from_ms=NOW - 60_000, to_ms=NOW)


def _stored(meta: MetaDB, tenant: Tenant, run_id: str) -> tuple[str, str | None]:
    with meta.session() as s:
        record = repo.get_run(s, tenant, run_id)
        return record.status, record.result


def _settled_record(meta: MetaDB, tenant: Tenant, run_id: str) -> tuple[str, str | None]:
    deadline = time.monotonic() + 10
    while _stored(meta, tenant, run_id)[0] == "STARTED" and time.monotonic() < deadline:
        time.sleep(0.01)
    return _stored(meta, tenant, run_id)


def _after_the_run_settles(runs: QueryRunService, tenant: Tenant, action: Any) -> Any:
    """``action`` on a run's record (``add_run(c, record)``), called only once the run has
    settled: the worker finishes before its record is written."""

    def later(c: Any, record: Any) -> Any:
        settled = threading.Event()
        if runs.watch(tenant, record.id, settled.set) > 0:
            assert settled.wait(30)
        return action(c, record)

    return later


def test_the_record_exists_when_the_id_is_returned_and_then_holds_the_outcome(
    service: Any,
) -> None:
    runs, meta, tenant, store = service
    store.gate.clear()  # the run cannot finish before it is looked at
    run_id = runs.create(tenant, _request()).run["id"]
    assert _stored(meta, tenant, run_id) == ("STARTED", None)

    store.gate.set()
    status, result = _settled_record(meta, tenant, run_id)
    assert status == "COMPLETED"
    assert result is not None and '"count":1' in result


def test_a_run_done_before_its_record_is_written_still_records_its_outcome(
    service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs, meta, tenant, _ = service
    monkeypatch.setattr(repo, "add_run", _after_the_run_settles(runs, tenant, repo.add_run))
    run_id = runs.create(tenant, _request()).run["id"]
    monkeypatch.undo()

    assert _settled_record(meta, tenant, run_id)[0] == "COMPLETED"


def test_when_the_record_cannot_be_written_the_run_is_refused_and_leaves_nothing(
    service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs, meta, tenant, _ = service

    def refuse(*_: Any) -> None:
        raise RuntimeError("the metadata database is read-only")

    monkeypatch.setattr(repo, "add_run", _after_the_run_settles(runs, tenant, refuse))
    monkeypatch.setattr(service_module, "new_id", lambda: "qr_refused")
    with pytest.raises(RuntimeError, match="read-only"):
        runs.create(tenant, _request())
    monkeypatch.undo()

    assert runs.peek(tenant, "qr_refused") is None  # not answered from memory
    with pytest.raises(NotFound):
        runs.get(tenant, "qr_refused")
    # Its worker, which finished first, did not stay waiting for the record.
    run_id = runs.create(tenant, _request()).run["id"]
    assert _settled_record(meta, tenant, run_id)[0] == "COMPLETED"
