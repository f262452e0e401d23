"""A run's record: written before its id is returned, while the run executes; the outcome after."""

from __future__ import annotations

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
from limelight.settings import Settings
from limelight.store.events.base import Tenant
from limelight.store.meta import queries_repo as repo
from limelight.store.meta import repos
from limelight.store.meta.db import MetaDB
from tests import query_reference as ref

NOW = 1_795_000_000_000


@pytest.fixture
def service(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    meta = MetaDB(f"sqlite:///{tmp_path / 'meta.db'}")
    meta.migrate()
    with meta.session(immediate=True) as s:
        workspace = repos.create_workspace(s, "records")
        tenant = Tenant(
            workspace.id, repos.create_environment(s, workspace, "prod", redact=False).id
        )
    store = ref.shared_chdb_store(tmp_path_factory)
    ref.store_events(store, tenant, "records", [{"timestamp": NOW - 1000, "n": 1}])
    # One worker: a worker left waiting would hold up every later run.
    runs = QueryRunService(Settings(data_dir=tmp_path, query_threads=1), meta, store)
    runs.start()
    yield runs, meta, tenant
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


def _slowly(action: Any) -> Any:
    """``action`` after the run has surely finished: the worker settles first."""

    def slow(*args: Any) -> Any:
        time.sleep(0.3)
        return action(*args)

    return slow


def test_the_record_exists_when_the_id_is_returned_and_then_holds_the_outcome(
    service: Any,
) -> None:
    runs, meta, tenant = service
    run_id = runs.create(tenant, _request()).run["id"]
    assert _stored(meta, tenant, run_id)[0] in ("STARTED", "COMPLETED")

    status, result = _settled_record(meta, tenant, run_id)
    assert status == "COMPLETED"
    assert result is not None and '"count":1' in result


def test_a_run_done_before_its_record_is_written_still_records_its_outcome(
    service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs, meta, tenant = service
    monkeypatch.setattr(repo, "add_run", _slowly(repo.add_run))
    run_id = runs.create(tenant, _request()).run["id"]
    monkeypatch.undo()

    assert _settled_record(meta, tenant, run_id)[0] == "COMPLETED"


def test_when_the_record_cannot_be_written_the_run_is_refused_and_leaves_nothing(
    service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs, meta, tenant = service

    def refuse(*_: Any) -> None:
        raise RuntimeError("the metadata database is read-only")

    monkeypatch.setattr(repo, "add_run", _slowly(refuse))
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
