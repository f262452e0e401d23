"""Event pages through the runner on chDB: in (time, id) order when many events share a time.

The runner first reads a page by time alone (over a long timeframe, first in its
last hour) and falls back to the exact statement when a tie at the page's end
could hide an event; all must give the same pages.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import orjson
import pytest

from limelight.event_json import dumps_exact
from limelight.ingest.service import Origin, build_rows
from limelight.query.compile import RunOptions, Timeframe, compile_run
from limelight.query.spec import validate_fields
from limelight.runs.execute import execute_plan
from limelight.runs.limits import RunLimits
from limelight.scoped import ScopedStatement
from limelight.settings import Settings
from limelight.store.events.base import EventStore, QueryResult
from limelight.tenant import Tenant
from tests import query_reference as ref
from tests.held_store import PassingStore

TENANT = Tenant("ws_pages", "env_pages")
T = 1_795_000_000_000
HOUR = 3_600_000
FRAMES = {
    "a minute": Timeframe(T - 60_000, T + 1),
    # `recent` (the last hour) holds the 260 newest; the 30 older need `newest`.
    "four hours": Timeframe(T - 4 * HOUR, T + 1),
}
LIMITS = RunLimits.from_settings(Settings())  # the defaults


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return ref.shared_chdb_store(tmp_path_factory)


@pytest.fixture(scope="module")
def records(store: Any) -> list[ref.Record]:
    rnd = random.Random(5)
    # 120 events at the newest time, 100 one millisecond older, 40 older still.
    times = [T] * 120 + [T - 1] * 100 + [T - 2] * 40
    times += [T - 2 * HOUR] * 10 + [T - 3 * HOUR + n for n in range(20)]
    rnd.shuffle(times)
    events = [{"timestamp": t, "n": rnd.randrange(10)} for t in times]
    return ref.store_events(store, TENANT, "pages", events)


@pytest.fixture(scope="module")
def beside() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(1) as pool:
        yield pool


PAGES = [
    ({}, 100, 0),  # the page ends inside the newest time: the exact statement tells
    ({}, 120, 0),  # ends with the newest time: read by time alone
    ({}, 100, 100),
    ({}, 100, 200),  # past the ties, and not full
    ({}, 30, 250),  # the last hour holds too few: the whole timeframe tells
    ({}, 50, 300),  # past every event of the last hour
    ({"filters": [{"key": "n", "operation": ">", "value": 4}]}, 30, 40),
    ({}, 1000, 0),  # too long to read by time first
]


@pytest.mark.parametrize("frame", sorted(FRAMES))
@pytest.mark.parametrize(("query", "limit", "offset"), PAGES)
def test_pages_follow_time_then_id_with_ties(
    frame: str,
    query: dict[str, Any],
    limit: int,
    offset: int,
    store: Any,
    records: Any,
    beside: ThreadPoolExecutor,
) -> None:
    plan = compile_run(
        validate_fields(query),
        workspace_id=TENANT.workspace_id,
        environment_id=TENANT.environment_id,
        table=store.table,
        timeframe=FRAMES[frame],
        options=RunOptions(limit=limit, offset=offset),
    )
    data = orjson.loads(execute_plan(store, plan, LIMITS, time.monotonic() + 30, beside))
    frm, to = FRAMES[frame].from_ms, FRAMES[frame].to_ms
    want = ref.events(records, query, frm, to, plan.limit, plan.offset)
    assert data["count"] == want["count"]
    assert [e["_id"] for e in data["events"]] == [e["_id"] for e in want["events"]]
    assert data["events"] == want["events"]


class _Recording(PassingStore):
    """The store, noting which statements ran."""

    def __init__(self, store: EventStore) -> None:
        super().__init__(store)
        self.ran: list[tuple[str, Mapping[str, Any]]] = []

    def read(self, statement: ScopedStatement) -> QueryResult:
        self.ran.append((statement.sql, statement.params))
        return self.store.read(statement)


@pytest.mark.parametrize(
    ("frame", "limit", "offset", "statements"),
    [
        ("four hours", 120, 0, {"recent", "count"}),  # the last hour tells the page
        ("four hours", 30, 250, {"recent", "newest", "count"}),  # it holds too few
        ("four hours", 100, 0, {"recent", "events", "count"}),  # a tie at the page's end
        ("a minute", 120, 0, {"newest", "count"}),  # no last hour to look in first
    ],
)
def test_the_last_hour_is_read_first_and_alone_when_it_holds_the_page(
    frame: str,
    limit: int,
    offset: int,
    statements: set[str],
    store: Any,
    records: Any,
    beside: ThreadPoolExecutor,
) -> None:
    recording = _Recording(store)
    plan = compile_run(
        validate_fields({}),
        workspace_id=TENANT.workspace_id,
        environment_id=TENANT.environment_id,
        table=store.table,
        timeframe=FRAMES[frame],
        options=RunOptions(limit=limit, offset=offset),
    )
    execute_plan(recording, plan, LIMITS, time.monotonic() + 30, beside)
    by_text = {(st.sql, str(st.params)): name for name, st in plan.statements.by_name().items()}
    assert {by_text[(sql, str(params))] for sql, params in recording.ran} == statements


def test_a_page_keeps_integers_beyond_64_bits_exact(store: Any, beside: ThreadPoolExecutor) -> None:
    tenant = Tenant("ws_pages", "env_big")
    event = {"timestamp": T, "id": 2**70, "user": {"n": -(2**63) - 5}, "small": 1}
    raw = dumps_exact(event, True)
    rows = build_rows(Origin(tenant, "big"), [(event, raw)], may_hold_secrets=False, exact=True)
    store.insert(tenant, rows)
    for query, want in [
        ({}, {**event, "_id": rows[0].id}),
        ({"keys": [{"key": "id"}, {"key": "user.n"}]}, {"id": 2**70, "user.n": -(2**63) - 5}),
    ]:
        plan = compile_run(
            validate_fields(query),
            workspace_id=tenant.workspace_id,
            environment_id=tenant.environment_id,
            table=store.table,
            timeframe=FRAMES["a minute"],
            options=RunOptions(),
        )
        data = json.loads(execute_plan(store, plan, LIMITS, time.monotonic() + 30, beside))
        assert data["count"] == 1
        assert {k: v for k, v in data["events"][0].items() if k in want} == want
