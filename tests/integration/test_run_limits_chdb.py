"""A run's memory limit on chDB: over it, the run fails with a sentence saying so."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from limelight.query.compile import RunOptions, Timeframe, compile_run
from limelight.query.spec import validate_fields
from limelight.runs.execute import RunFailed, execute_plan
from limelight.runs.limits import RunLimits
from limelight.settings import Settings
from limelight.tenant import Tenant
from tests import query_reference as ref

TENANT = Tenant("ws_limits", "env_limits")
NOW = 1_795_000_000_000
TIMEFRAME = Timeframe(NOW - 3_600_000, NOW)
QUERY = {
    "calculations": [{"operator": "COUNT_DISTINCT", "key": "requestId"}],
    "group_bys": [{"key": "data.userId"}],
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    query_store = ref.shared_chdb_store(tmp_path_factory)
    events = ref.generate_events(2_000, seed=11, now_ms=NOW - 1, span_ms=3_000_000)
    ref.store_events(query_store, TENANT, "limits", events)
    yield query_store


def _run(store: Any, max_memory_bytes: int) -> dict[str, Any]:
    plan = compile_run(
        validate_fields(QUERY),
        workspace_id=TENANT.workspace_id,
        environment_id=TENANT.environment_id,
        table=store.table,
        timeframe=TIMEFRAME,
        options=RunOptions(max_memory_bytes=max_memory_bytes),
    )
    limits = dataclasses.replace(
        RunLimits.from_settings(Settings()), max_memory_bytes=max_memory_bytes
    )
    data: dict[str, Any] = orjson.loads(
        execute_plan(store, plan, limits, deadline=time.monotonic() + 10)
    )
    return data


def test_a_run_within_its_memory_limit_completes(store: Any) -> None:
    data = _run(store, 2048 * 1024 * 1024)
    assert sum(a["values"]["_count"] for a in data["aggregates"]) == 2_000


def test_a_run_over_its_memory_limit_fails_saying_so(store: Any) -> None:
    with pytest.raises(RunFailed) as failed:
        _run(store, 64 * 1024)
    assert str(failed.value).startswith(
        "the query needed more memory than its limit of 65536 bytes;"
    )
