"""A needle over events written a moment ago, beside a COUNT by service over them.

The needle's indexes are built when parts merge (store.events.base.INSERT_SETTINGS),
so a needle reads the newest small parts whole: over just-written events it cost
2-3x a COUNT by service, 1.3x once merged. The same 10-event bodies from 64 clients
(the ingest section's events, one tenant) go into the engine of this process two
ways, a fresh database each, in turns:

- wal: through the write-ahead log (store.events.buffered), written in blocks;
- group: one INSERT a batch, grouped while the engine is busy (ingest.group_commit),
  as with ``LIMELIGHT_INGEST_BUFFER=false``.

Right after the last batch is readable, the two statements the compiler writes (a
COUNT grouped by service; a COUNT with the needle "cart", in about 20% of the
events) are timed in turns, wall medians of ``TURNS``, with the query condition
cache off, and the active parts counted.
"""

from __future__ import annotations

import statistics
import time
import uuid
from typing import TYPE_CHECKING, Any

from bench.ingest import TINY_BATCH, TINY_CLIENTS, make_batches, run_concurrently
from limelight.ingest.group_commit import GroupCommit
from limelight.ingest.service import RowSink
from limelight.query.compile import RunOptions, Timeframe, compile_run
from limelight.query.spec import validate_fields
from limelight.store.events.base import settings_clause
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.tenant import Tenant

if TYPE_CHECKING:
    from bench.run import BenchContext

TURNS = 7
NEEDLE = "cart"


def _statement(store: ChdbEventStore, tenant: Tenant, needle: str | None) -> tuple[str, Any]:
    fields: dict[str, Any] = {"calculations": [{"operator": "COUNT"}]}
    if needle is None:
        fields["group_bys"] = [{"key": "_service"}]
    else:
        fields["needle"] = {"value": needle}
    now = int(time.time() * 1000)
    plan = compile_run(
        validate_fields(fields),
        workspace_id=tenant.workspace_id,
        environment_id=tenant.environment_id,
        table=store.table,
        timeframe=Timeframe(now - 3 * 3_600_000, now + 60_000),
        options=RunOptions(),
    )
    statement = plan.statements.by_name()["aggregates"]
    sql = statement.sql.replace(
        " SETTINGS ", f" SETTINGS {settings_clause({'use_query_condition_cache': 0})}, ", 1
    )
    return sql, statement.params


def _parts(store: ChdbEventStore) -> int:
    database, table = store.table.split(".")
    sql = (
        "SELECT count() AS n FROM system.parts WHERE database = {d:String}"
        " AND table = {t:String} AND active"
    )
    return int(store.query(sql, {"d": database, "t": table}, ["n"]).rows[0]["n"])


def _once(ctx: BenchContext, mode: str, count: int) -> tuple[float, float, float, int, float]:
    """Ingest seconds (to readable), the first read's ms (it waits for what the log
    holds), then COUNT ms, needle ms and parts right after."""
    path = ctx.scratch("fresh-chdb")
    database = f"fresh_{uuid.uuid4().hex[:8]}"
    wal = ctx.scratch(f"fresh-wal-{database}") if mode == "wal" else None
    store = ChdbEventStore(path, database=database, wal=wal)
    store.start()
    sink: RowSink = store if mode == "wal" else GroupCommit(store)
    tenant = Tenant(ctx.tenant.workspace_id, ctx.tenant.environment_id)
    batches = make_batches(count, TINY_BATCH, "fresh")
    try:
        started = time.perf_counter()
        run_concurrently(batches, TINY_CLIENTS, lambda b: sink.insert(tenant, b.rows))
        count_sql, count_params = _statement(store, tenant, None)
        read = time.perf_counter()
        store.query(count_sql, count_params)  # readable: the log's blocks are written
        ingest_s = time.perf_counter() - started
        first_ms = (time.perf_counter() - read) * 1000
        parts = _parts(store)
        needle_sql, needle_params = _statement(store, tenant, NEEDLE)
        counts, needles = [], []
        for _ in range(TURNS):
            for sql, params, times in (
                (count_sql, count_params, counts),
                (needle_sql, needle_params, needles),
            ):
                t = time.perf_counter()
                store.query(sql, params)
                times.append((time.perf_counter() - t) * 1000)
        return ingest_s, first_ms, statistics.median(counts), statistics.median(needles), parts
    finally:
        store.close()


def run(ctx: BenchContext) -> None:
    count = 12_000 if ctx.quick else 24_000
    rows: dict[str, list[tuple[float, float, float, int, float]]] = {"wal": [], "group": []}
    for i in range(ctx.repeats):
        for mode in ("wal", "group") if i % 2 == 0 else ("group", "wal"):
            rows[mode].append(_once(ctx, mode, count))
    head = (
        f"{'path':<8}{'events/s':>10}{'1st read ms':>12}{'parts':>7}{'COUNT ms':>10}"
        f"{'needle ms':>11}"
        f"{'needle/COUNT':>14}"
    )
    print(f"{count:,} events in {TINY_BATCH}-event batches from {TINY_CLIENTS} clients")
    print(head)
    print("-" * len(head))
    for mode, measured in rows.items():
        ingest = statistics.median(m[0] for m in measured)
        first = statistics.median(m[1] for m in measured)
        count_ms = statistics.median(m[2] for m in measured)
        needle_ms = statistics.median(m[3] for m in measured)
        parts = statistics.median(m[4] for m in measured)
        print(
            f"{mode:<8}{count / ingest:>10,.0f}{first:>12.1f}{parts:>7.0f}{count_ms:>10.1f}"
            f"{needle_ms:>11.1f}{needle_ms / count_ms:>14.2f}"
        )
