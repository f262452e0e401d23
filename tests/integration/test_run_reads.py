"""Reads that answer at once (trace search, the service overview) are admitted and
queued as query runs are: the workspace's turn on the workers, the time to start by,
the run creations' rate limit; a read's error reaches its caller."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from limelight.errors import BadRequest, RateLimited, Unavailable
from limelight.runs.service import QueryRunService
from limelight.settings import Settings
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant
from tests.support import migrated_sqlite

WAIT = 30.0
A, B = Tenant("ws_reads_a", "env_a"), Tenant("ws_reads_b", "env_b")


@pytest.fixture()
def meta(tmp_path: Path) -> Iterator[MetaDB]:
    db = migrated_sqlite(tmp_path / "meta.db")
    yield db
    db.dispose()


def _service(tmp_path: Path, meta: MetaDB, **settings: object) -> Iterator[QueryRunService]:
    # The reads here never reach the events store: built, never started.
    events = ChdbEventStore(tmp_path / "chdb")
    runs = QueryRunService(Settings(data_dir=tmp_path, **settings), meta, events)
    runs.start()
    try:
        yield runs
    finally:
        runs.close()


@pytest.fixture()
def runs(tmp_path: Path, meta: MetaDB) -> Iterator[QueryRunService]:
    yield from _service(
        tmp_path, meta, query_threads=2, query_threads_per_workspace=1, query_max_run_seconds=7
    )


def test_a_read_answers_with_its_deadline_or_its_error(runs: QueryRunService) -> None:
    before = time.monotonic()
    deadline = runs.read(A, lambda deadline: deadline).result(WAIT)
    assert before + 7 <= deadline <= time.monotonic() + 7

    def refuse(_: float) -> None:
        raise BadRequest("no such thing")

    with pytest.raises(BadRequest, match="no such thing"):
        runs.read(A, refuse).result(WAIT)


def test_a_workspace_with_a_read_running_does_not_keep_another_waiting(
    runs: QueryRunService,
) -> None:
    release = threading.Event()
    started = threading.Event()

    def hold(_: float) -> str:
        started.set()
        assert release.wait(WAIT)
        return "held"

    first = runs.read(A, hold)
    assert started.wait(WAIT)
    # A's second read waits for A's turn (one at a time per workspace); B's runs now.
    second = runs.read(A, lambda _: "a")
    assert runs.read(B, lambda _: "b").result(WAIT) == "b"
    assert not second.done()
    release.set()
    assert first.result(WAIT) == "held" and second.result(WAIT) == "a"


def test_a_read_that_waits_past_its_time_to_start_fails_unavailable(
    tmp_path: Path, meta: MetaDB
) -> None:
    service = _service(tmp_path, meta, query_threads=1, query_max_queue_seconds=0.2)
    runs = next(service)
    release, started = threading.Event(), threading.Event()

    def hold(_: float) -> bool:
        started.set()
        return release.wait(WAIT)

    try:
        first = runs.read(A, hold)
        assert started.wait(WAIT)
        queued = runs.read(B, lambda _: "too late")
        start_by = time.monotonic() + 0.2
        # The only worker is held until the queued read's time to start has passed.
        while time.monotonic() <= start_by:
            time.sleep(0.01)
        release.set()
        assert first.result(WAIT) is True
        with pytest.raises(Unavailable, match="waited longer than 0.2 s"):
            queued.result(WAIT)
    finally:
        release.set()
        next(service, None)


def test_reads_count_against_the_run_creations_limit(tmp_path: Path, meta: MetaDB) -> None:
    service = _service(tmp_path, meta, query_runs_per_minute=2)
    runs = next(service)
    try:
        for _ in range(2):
            assert runs.read(A, lambda _: 1).result(WAIT) == 1
        with pytest.raises(RateLimited):
            runs.read(A, lambda _: 1)
        assert runs.read(B, lambda _: 2).result(WAIT) == 2  # another workspace's own count
    finally:
        next(service, None)
