"""The server mode beside the embedded one: ingest and queries through 1 and 2 API
processes on PostgreSQL and the ClickHouse double, and through the embedded server.

Each deployment is started fresh on this machine and gets the same work:
- ingest: the same 1,000-event batches (about 0.5kb per event) from 4 clients,
  events/s until every batch has its 202 (each request on a new connection, so
  both processes of a 2-process deployment take requests);
- queries: COUNT by service and P99(duration) by service over those events
  (about 60,000), created with ``POST /v1/query_run?wait=``, medians of
  ``repeats`` x 10 runs.

The double runs every statement on chDB behind Python's HTTP server, so the
server mode here measures what the transport costs (HTTP, clickhouse-connect,
PostgreSQL for the metadata), not what a ClickHouse server would do: on one
machine of 2 cores the API processes and the engine share the same cores.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import httpx
from tests.support import LiveServer, launch, launch_scaled

from bench.ingest import SMALL_BATCH, Batch, make_batches, run_concurrently

if TYPE_CHECKING:
    from bench.run import BenchContext

EVENTS = 60_000
CLIENTS = 4
QUESTIONS = {
    "COUNT by service": {
        "calculations": [{"operator": "COUNT"}],
        "group_bys": [{"key": "_service"}],
    },
    "P99(duration) by service": {
        "calculations": [{"operator": "P99", "key": "duration"}],
        "group_bys": [{"key": "_service"}],
    },
}


def _ingest(server: LiveServer, key: str, batches: list[Batch]) -> float:
    def send(batch: Batch) -> None:
        answer = httpx.post(
            f"{server.events_url}/v1/bench",
            content=batch.body,
            headers={"x-api-key": key, "content-type": "application/json"},
            timeout=120,
        )
        if answer.status_code != 202:
            raise RuntimeError(f"ingest answered {answer.status_code}: {answer.text[:200]}")

    seconds = run_concurrently(batches, CLIENTS, send)
    return sum(len(b.rows) for b in batches) / seconds


def _query(server: LiveServer, key: str, query: dict[str, Any], repeats: int) -> float:
    now = int(time.time() * 1000)
    body = {"query": query, "from": now - 2 * 3_600_000, "to": now + 1}
    times = []
    for _ in range(repeats * 10):
        started = time.perf_counter()
        answer = httpx.post(
            f"{server.url}/v1/query_run?wait=30",
            json=body,
            headers={"Authorization": key},
            timeout=60,
        )
        times.append(time.perf_counter() - started)
        if answer.json()["query_run"]["status"] != "COMPLETED":
            raise RuntimeError(f"a run did not complete: {answer.text[:300]}")
    return statistics.median(times)


def run(ctx: BenchContext) -> None:
    events = 10_000 if ctx.quick else EVENTS
    batches = make_batches(events, SMALL_BATCH, "bench")
    deployments: dict[str, Callable[[], LiveServer]] = {
        "embedded (1 process, SQLite, chDB)": lambda: launch(ctx.scratch("scale-embedded")),
        "server mode, 1 API process": lambda: launch_scaled(ctx.scratch("scale-1"), workers=1),
        "server mode, 2 API processes": lambda: launch_scaled(ctx.scratch("scale-2"), workers=2),
    }
    rows = []
    for name, start in deployments.items():
        server = start()
        try:
            tenant = server.new_tenant(redact=False)
            rate = _ingest(server, tenant.ingest_key, batches)
            answers = [_query(server, tenant.admin_key, q, ctx.repeats) for q in QUESTIONS.values()]
        finally:
            server.stop()
        rows.append((name, rate, *answers))
        ctx.log(f"  {name}: done")
    print(f"{events:,} events in batches of {SMALL_BATCH:,} from {CLIENTS} clients; then queries")
    print("| deployment | ingest events/s | " + " | ".join(f"{q} (s)" for q in QUESTIONS) + " |")
    print("|---|---|" + "---|" * len(QUESTIONS))
    base = rows[0][1]
    for name, rate, *answers in rows:
        cells = " | ".join(f"{a:.3f}" for a in answers)
        print(f"| {name} | {rate:,.0f} ({rate / base:.2f}x) | {cells} |")
