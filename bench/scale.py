"""The server mode beside the embedded one: ingest and queries through 1 and 2 API
processes on PostgreSQL and the ClickHouse double, and through the embedded server.

Each deployment is started fresh on this machine and gets the same work:
- ingest: the same events (about 0.5kb each) in batches of 1,000 and then of
  about 6MB, from 4 clients, events/s until every batch has its 202 (each request
  on a new connection, so both processes of a 2-process deployment take
  requests). Beside it, the CPU seconds the API processes and the engine spent
  (from /proc: the serving process and its children; the double's process), as
  events per CPU-second, which is events/s per core when a core is given to
  each; and the parts the engine wrote (its MergeTreeDataWriterBlocks counter),
  per second and per batch. These are the figures of the capacity model in the
  README;
- queries: COUNT by service and P99(duration) by service over those events
  (about 60,000), created with ``POST /v1/query_run?wait=``, medians of
  ``repeats`` x 10 runs.

The double runs every statement on chDB behind Python's HTTP server, so the
server mode here measures what the transport costs (HTTP, clickhouse-connect,
PostgreSQL for the metadata), not what a ClickHouse server would do: on one
machine of 2 cores the API processes and the engine share the same cores.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
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


_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    """User and system CPU of ``pid`` and of its live children (uvicorn's workers)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / _TICKS
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        children = [p for p, pp in parents.items() if pp == parent and p not in tree]
        tree.update(children)
        frontier.extend(children)
    return sum(times.get(p, 0.0) for p in tree)


def _double_pid(server: LiveServer) -> int | None:
    """The ClickHouse double's process (None in the embedded mode)."""
    marker = str(server.data_dir.parent / "double").encode()
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"tests.clickhouse_double" in cmdline and marker in cmdline:
            return int(entry.name)
    return None


def _parts_written(server: LiveServer) -> int | None:
    """Parts the double's engine has written since it started (inserts and merges)."""
    url = server.env.get("LIMELIGHT_CLICKHOUSE_URL")
    if server.mode != "scaled" or not url:
        return None
    base = url.split("@", 1)[-1].split("/", 1)[0]
    answer = httpx.post(
        f"http://{base}/",
        content=b"SELECT value FROM system.events WHERE event = 'MergeTreeDataWriterBlocks'",
    )
    return int(answer.text.strip() or 0)


@dataclass
class Ingest:
    events_per_s: float
    api_cpu_s: float
    engine_cpu_s: float | None
    parts: int | None
    seconds: float


def _measured_ingest(server: LiveServer, key: str, batches: list[Batch]) -> Ingest:
    assert server.proc is not None
    engine = _double_pid(server)
    api_before = _cpu_seconds(server.proc.pid)
    engine_before = _cpu_seconds(engine) if engine else None
    parts_before = _parts_written(server)
    rate = _ingest(server, key, batches)
    events = sum(len(b.rows) for b in batches)
    api = _cpu_seconds(server.proc.pid) - api_before
    engine_s = (
        _cpu_seconds(engine) - engine_before if engine and engine_before is not None else None
    )
    parts_after = _parts_written(server)
    parts = (
        parts_after - parts_before if parts_after is not None and parts_before is not None else None
    )
    return Ingest(rate, api, engine_s, parts, events / rate)


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
    shapes = {
        f"{SMALL_BATCH:,} events": make_batches(events, SMALL_BATCH, "bench"),
        "6MB": make_batches(events, None, "bench", seed=8),
    }
    deployments: dict[str, Callable[[], LiveServer]] = {
        "embedded (1 process, SQLite, chDB)": lambda: launch(ctx.scratch("scale-embedded")),
        "server mode, 1 API process": lambda: launch_scaled(ctx.scratch("scale-1"), workers=1),
        "server mode, 2 API processes": lambda: launch_scaled(ctx.scratch("scale-2"), workers=2),
    }
    ingest_rows: list[tuple[str, str, int, Ingest]] = []
    query_rows = []
    for name, start in deployments.items():
        server = start()
        try:
            tenant = server.new_tenant(redact=False)
            for shape, batches in shapes.items():
                measured = _measured_ingest(server, tenant.ingest_key, batches)
                ingest_rows.append((name, shape, len(batches), measured))
            answers = [_query(server, tenant.admin_key, q, ctx.repeats) for q in QUESTIONS.values()]
        finally:
            server.stop()
        query_rows.append((name, *answers))
        ctx.log(f"  {name}: done")
    print(f"{events:,} events per batch size from {CLIENTS} clients")
    print(
        "| deployment | batches | ingest events/s | events per API CPU-second |"
        " events per engine CPU-second | parts written/s | parts per batch |"
    )
    print("|---|---|---|---|---|---|---|")
    base = {shape: m.events_per_s for n, shape, _, m in ingest_rows if n == ingest_rows[0][0]}
    for name, shape, count, m in ingest_rows:
        engine = f"{events / m.engine_cpu_s:,.0f}" if m.engine_cpu_s else "in the API process"
        parts = f"{m.parts / m.seconds:,.1f}" if m.parts is not None else "-"
        per_batch = f"{m.parts / count:.2f}" if m.parts is not None else "-"
        print(
            f"| {name} | {shape} | {m.events_per_s:,.0f} ({m.events_per_s / base[shape]:.2f}x)"
            f" | {events / m.api_cpu_s:,.0f} | {engine} | {parts} | {per_batch} |"
        )
    print()
    print(f"then queries over the {2 * events:,} events (medians, s)")
    print("| deployment | " + " | ".join(QUESTIONS) + " |")
    print("|---|" + "---|" * len(QUESTIONS))
    for name, *answers in query_rows:
        print(f"| {name} | " + " | ".join(f"{a:.3f}" for a in answers) + " |")
