"""Alert checks over 10M events: 1,000 alerts due every minute, checked by one evaluator.

Uses the events of the queries section (the same data directory, generated
once; LIMELIGHT_BENCH_QUERIES_DIR keeps them). The evaluator runs in this
process on that engine and a fresh metadata database, with a clock that starts
an hour before the data ends and moves with real time: every check's window
holds about a minute of the 10M events (about 1,000 events). The alerts watch
four saved queries (a count by service, a P99 of the failed requests by
service, a count of errors, a count of one needle) with thresholds that put
about one in ten in alarm; those notify a local webhook receiver.

Printed per thread count (``LIMELIGHT_ALERT_THREADS``), for two rounds (all
1,000 due at once, then all due again a minute later): how long the round took,
checks per second, and the evaluator's lag (from each check's due time to its
start). The goal: a round under 60 s, so every alert is checked within its minute.
"""

from __future__ import annotations

import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import update
from tests.alert_support import webhook_receiver

from bench.queries import _data_dir, _prepare
from limelight.alerts.evaluator import CheckReport, Evaluator
from limelight.alerts.service import AlertService
from limelight.settings import Settings
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.store.meta import queries_repo
from limelight.store.meta.alerts_models import Alert
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import Environment, Workspace
from limelight.tenant import Tenant

if TYPE_CHECKING:
    from bench.run import BenchContext

ALERTS = 1_000
THREADS = (2, 4)
QUERIES = [
    {"calculations": [{"operator": "COUNT"}], "group_bys": [{"key": "service"}]},
    {
        "calculations": [{"operator": "P99", "key": "duration"}],
        "filters": [{"key": "status", "operation": ">=", "value": 500}],
        "group_bys": [{"key": "service"}],
    },
    {
        "calculations": [{"operator": "COUNT"}],
        "filters": [{"key": "level", "operation": "=", "value": "error"}],
    },
    {"calculations": [{"operator": "COUNT"}], "needle": {"value": "timeout"}},
]


def _alerts(meta: MetaDB, settings: Settings, tenant: Tenant, hook: str, count: int) -> None:
    """``count`` alerts on the saved queries, in the data's tenant (same ids)."""
    with meta.session(immediate=True) as s:
        ws = Workspace(id=tenant.workspace_id, name=f"bench-{uuid.uuid4().hex[:8]}")
        s.add(ws)
        s.flush()
        s.add(Environment(id=tenant.environment_id, workspace_id=ws.id, name="prod"))
        s.flush()
        query_ids = [queries_repo.create_query(s, tenant, q, "bench").id for q in QUERIES]
    service = AlertService(settings, meta)
    for i in range(count):
        alarm = i % 10 == 0  # a threshold every window crosses
        service.create(
            tenant,
            {
                "name": f"alert {i}",
                "query_id": query_ids[i % len(query_ids)],
                "threshold": {"operation": ">=" if alarm else ">", "value": 0 if alarm else 1e12},
                "frequency": "1m",
                "destinations": [{"type": "webhook", "url": hook}] if alarm else [],
            },
            "bench",
        )


class BenchClock:
    """``start``, moving with real time, plus the jumps the bench makes."""

    def __init__(self, start: datetime) -> None:
        self.start, self.t0, self.offset = start, time.monotonic(), 0.0

    def now(self) -> datetime:
        return self.start + timedelta(seconds=time.monotonic() - self.t0 + self.offset)


def _round(evaluator: Evaluator, expected: int) -> tuple[float, list[CheckReport]]:
    started = time.perf_counter()
    reports: list[CheckReport] = []
    while len(reports) < expected and time.perf_counter() - started < 300:
        reports += evaluator.tick()
    return time.perf_counter() - started, reports


def run(ctx: BenchContext) -> None:
    counts = [100_000, 1_000_000] if ctx.quick else [1_000_000, 10_000_000]
    data_dir = _data_dir(ctx)
    data_dir.mkdir(parents=True, exist_ok=True)
    size = _prepare(ctx, data_dir, counts)[-1]
    data_end = datetime.fromtimestamp(size.to / 1000, UTC)
    alerts = 100 if ctx.quick else ALERTS
    store = ChdbEventStore(data_dir / "chdb")
    store.start()
    rows = []
    try:
        with webhook_receiver() as hooks:
            for threads in THREADS:
                meta_dir = ctx.scratch(f"alerts-{threads}")
                meta = MetaDB(f"sqlite:///{meta_dir / 'meta.db'}")
                meta.migrate()
                settings = Settings(
                    data_dir=meta_dir,
                    alert_threads=threads,
                    destination_allow_networks="127.0.0.0/8",
                )
                _alerts(meta, settings, size.tenant, hooks.url("/bench"), alerts)
                start = data_end - timedelta(hours=1)
                with meta.connection(immediate=True) as c:  # all due on the bench's clock
                    c.execute(update(Alert).values(next_check_at=start))
                clock = BenchClock(start)
                evaluator = Evaluator(settings, meta, store, clock=clock.now)
                evaluator.start_pool()
                try:
                    for round_no in (1, 2):
                        if round_no == 2:  # a minute after the start: every alert due again
                            clock.offset = 60 - (time.monotonic() - clock.t0)
                        seconds, reports = _round(evaluator, alerts)
                        lags = sorted(r.lag_seconds for r in reports)
                        rows.append(
                            (
                                threads,
                                round_no,
                                len(reports),
                                seconds,
                                len(reports) / seconds,
                                statistics.median(lags),
                                lags[int(len(lags) * 0.99) - 1],
                                lags[-1],
                                sum(1 for r in reports if r.notification),
                            )
                        )
                finally:
                    evaluator.close()
                    meta.dispose()
            notified = len(hooks.on("/bench"))
    finally:
        store.close()
    print(f"{alerts:,} alerts due every minute over {size.events:,} events (1-minute windows)")
    print(
        "| threads | round | checks | seconds | checks/s | lag p50 s | lag p99 s | lag max s"
        " | notified |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        threads, round_no, checks, seconds, rate, p50, p99, worst, fired = row
        print(
            f"| {threads} | {round_no} | {checks} | {seconds:.1f} | {rate:.0f} | {p50:.1f}"
            f" | {p99:.1f} | {worst:.1f} | {fired} |"
        )
    print(f"webhooks received: {notified}")
    slow = [r for r in rows if r[2] < alerts or r[3] >= 60]
    print("  goal (every alert checked within its minute): " + ("met" if not slow else "missed"))
