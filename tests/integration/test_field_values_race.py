"""Field values' count and its read: a count at most the sample picks the read in no
order, whose LIMIT would take any ``sample`` of events written after the count, not the
newest; the newest are read instead once it reads more than the sample, and only then."""

from __future__ import annotations

import functools
import time
from typing import Any

import pytest

from limelight.query import field_values as fv
from limelight.query.plans import Timeframe
from limelight.runs import investigate
from limelight.runs.limits import RunLimits
from limelight.settings import Settings
from limelight.tenant import Tenant
from tests import query_reference as ref

TENANT = Tenant("ws_values_race", "env_values_race")
NOW_MS = 1_795_003_600_000
LIMITS = RunLimits.from_settings(Settings())


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return ref.shared_chdb_store(tmp_path_factory)


class WatchedStore:
    """The store, counting the statements that read values, with ``late`` events written
    just after field values' count statement."""

    def __init__(self, store: Any, late: list[dict[str, Any]] | None = None) -> None:
        self._store, self._late, self.values_reads = store, late or [], 0

    def read(self, statement: Any) -> Any:
        columns = tuple(getattr(statement, "columns", ()))
        self.values_reads += columns == fv.COLUMNS
        answer = self._store.read(statement)
        if self._late and columns == fv.EVENTS_COLUMNS:
            for event in self._late:  # a part each, as separate requests write them
                ref.store_events(self._store, TENANT, "d", [event])
            self._late = []
        return answer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_late_events_written_after_the_count_do_not_displace_the_newest(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = Timeframe(NOW_MS - 3_600_000, NOW_MS)
    newest = [{"timestamp": frame.to_ms - 10_000 + i * 1000, "color": "newest"} for i in range(10)]
    for event in newest:
        ref.store_events(store, TENANT, "d", [event])
    # Late-arriving events of the same timeframe, older than every event above.
    late = [{"timestamp": frame.from_ms + i * 1000, "color": "older"} for i in range(10)]
    monkeypatch.setattr(
        investigate, "compile_field_values", functools.partial(fv.compile_field_values, sample=10)
    )
    answer = investigate.field_values(
        WatchedStore(store, late), TENANT, "d", "color", [], frame, 10, LIMITS,
        time.monotonic() + 30,
    )  # fmt: skip
    # Before the write and after it alike, the newest 10 events are the "newest" ones.
    assert [(v["value"], v["count"]) for v in answer["values"]] == [("newest", 10)]
    assert answer["sampled"] is True


def test_a_timeframe_holding_exactly_the_sample_is_read_once_and_not_called_sampled(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = Tenant("ws_values_race", "env_values_exact")
    frame = Timeframe(NOW_MS - 3_600_000, NOW_MS)
    events = [{"timestamp": frame.from_ms + i * 1000, "color": f"c{i % 3}"} for i in range(30)]
    ref.store_events(store, tenant, "d", events)
    monkeypatch.setattr(
        investigate, "compile_field_values", functools.partial(fv.compile_field_values, sample=30)
    )
    counting = WatchedStore(store)
    answer = investigate.field_values(
        counting, tenant, "d", "color", [], frame, 10, LIMITS, time.monotonic() + 30
    )
    assert counting.values_reads == 1  # the read in no order: nothing newer to look for
    assert [(v["value"], v["count"]) for v in answer["values"]] == [
        ("c0", 10),
        ("c1", 10),
        ("c2", 10),
    ]
    assert (answer["events"], answer["sampled"]) == (30, False)
