"""Where the CPU of an ingested event goes: the server's threads and the bench's client.

On a shared 2-core machine events/s say more about the other work on it than about
the server; the CPU an event costs is what bounds the rate once the cores are busy.
The same bodies as ``bench/ingest.py`` (6MB bodies from 4 clients, 10-event bodies
from 64 clients of one tenant and of 16), sent in turns, ROUNDS times, by its client
(``http.client``, one keep-alive connection per client thread), each shape ending with
a read of each tenant (so the write-ahead log is in the engine). For each: events/s,
then CPU time over the events:

- server, Python threads: the event loop (HTTP, routing, the access log), the worker
  threads (the key lookup, parsing, the log's append and sync) and the inserter, with
  the part of each INSERT that chDB runs on its calling thread;
- server, engine threads: chDB's own (the INSERT's pipeline, merges, background work);
- client: this process, the 64 threads that send.

The server's figure is the process's own (its ended threads included). Its split is
indicative: Python's share is the process's CPU less that of the engine's threads alive
at the end, and the engine's pool threads that end meanwhile (idle ones do) leave
their time on Python's side.
"""

from __future__ import annotations

import os
import resource
import statistics
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bench.ingest import CLIENTS, TINY_BATCH, TINY_CLIENTS, HttpPath, make_batches, run_concurrently

if TYPE_CHECKING:
    from bench.run import BenchContext

ROUNDS = 3
TENANTS = 16
PYTHON_THREAD = "python"  # Python's threads keep the process's name; chDB names its own


def server_cpu(pid: int) -> dict[str, float]:
    """CPU seconds (user and system) of the process ("server", its ended threads included)
    and of the engine's live threads; Python's are the rest."""
    tick = os.sysconf("SC_CLK_TCK")

    def seconds(stat: str) -> tuple[str, float]:
        head, rest = stat.rsplit(")", 1)
        fields = rest.split()
        return head.split("(", 1)[1], (int(fields[11]) + int(fields[12])) / tick

    engine = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name, used = seconds((task / "stat").read_text())
        except OSError:
            continue  # a thread that ended meanwhile
        if not name.startswith(PYTHON_THREAD):
            engine += used
    _, total = seconds(Path(f"/proc/{pid}/stat").read_text())
    return {"server": total, "engine": engine, "python": total - engine}


def client_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(ctx: BenchContext) -> None:
    count = 12_000 if ctx.quick else 48_000
    # Enough 6MB bodies (about 12,000 events each) that each of the 4 clients sends two.
    large = 8 * 12_000
    tenants = [ctx.tenant] + [ctx.server.new_tenant() for _ in range(TENANTS - 1)]
    http = HttpPath(
        ctx.server.events_url, ctx.tenant.ingest_key, "bench", [t.ingest_key for t in tenants]
    )
    shapes = {
        "6MB, 4 clients": (make_batches(large, None, "bench"), CLIENTS, 1),
        "10 events, 64 clients": (make_batches(count, TINY_BATCH, "bench"), TINY_CLIENTS, 1),
        "10 events, 64 clients, 16 tenants": (
            make_batches(count, TINY_BATCH, "bench"),
            TINY_CLIENTS,
            TENANTS,
        ),
    }
    for batches, _, senders in shapes.values():
        for i, batch in enumerate(batches):
            batch.tenant = i % senders
    run_concurrently(make_batches(200, 10, "warmup"), CLIENTS, http.send)
    assert ctx.server.proc is not None
    pid = ctx.server.proc.pid
    figures: dict[str, dict[str, list[float]]] = {s: {} for s in shapes}
    try:
        for _ in range(ROUNDS):
            for shape, (batches, clients, senders) in shapes.items():
                time.sleep(1.0)
                before, client_before = server_cpu(pid), client_cpu()
                started = time.perf_counter()
                run_concurrently(batches, clients, http.send)
                for t in tenants[:senders]:
                    ctx.server.read(t.admin_key, "bench", limit=1)
                seconds = time.perf_counter() - started
                after, client_after = server_cpu(pid), client_cpu()
                got = figures[shape]
                events = sum(len(b.rows) for b in batches)
                got.setdefault("events/s", []).append(events / seconds)
                for kind in ("python", "engine", "server"):
                    used = after[kind] - before[kind]
                    got.setdefault(kind, []).append(used * 1e6 / events)
                got.setdefault("client", []).append((client_after - client_before) * 1e6 / events)
    finally:
        http.close()
    print(
        f"{large:,} events in 6MB bodies, {count:,} in 10-event bodies, {ROUNDS} rounds in "
        "turns, medians; µs of CPU an event"
    )
    head = f"{'bodies':<36}{'events/s':>10}{'Python':>9}{'engine':>9}{'server':>9}{'client':>9}"
    print(head)
    print("-" * len(head))
    for shape, got in figures.items():
        m = {k: statistics.median(v) for k, v in got.items()}
        print(
            f"{shape:<36}{m['events/s']:>10,.0f}{m['python']:>9.0f}{m['engine']:>9.0f}"
            f"{m['server']:>9.0f}{m['client']:>9.0f}"
        )
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
