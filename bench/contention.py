"""What other clients' load costs a light request, beside the same request unloaded.

- Stalled connections: a server with 3 s head and body timeouts; 20 calls to
  ``/health`` and an ingest of one event, on the idle server and while it holds
  300 connections that sent part of a head and 50 uploads that stalled in their
  body (the tests check that they are answered while those are held; this
  times them).
- Query runs: one workspace queues 12 heavy runs (grouping 300,000 distinct
  messages with exact medians), another runs a COUNT over 10 events. Its time
  alone, beside the flood, and what first come, first served would have made
  it wait (the 12 heavy runs one after the other). The tests check the order in
  which the runs reach the engine; this times it. In this process, on its own
  engine and metadata database.
"""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from tests import query_reference as ref
from tests.support import LiveServer, launch, migrated_sqlite

from limelight.query.spec import QueryFields, validate_fields
from limelight.runs import RunRequest
from limelight.runs.service import QueryRunService
from limelight.settings import Settings
from limelight.store.events.base import JSON_PARSE_SETTINGS, settings_clause
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.store.meta import repos
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant

if TYPE_CHECKING:
    from bench.run import BenchContext

HEADS, BODIES = 300, 50
NOW = 1_795_000_000_000
HOUR = 3_600_000
HEAVY_EVENTS = 300_000
HEAVY_RUNS = 12
HEAVY = validate_fields(
    {
        "group_bys": [{"key": "message"}],
        "calculations": [
            {"operator": "MEDIAN", "key": "n"},
            {"operator": "COUNT_DISTINCT", "key": "n"},
        ],
        "limit": 10,
    }
)
LIGHT = validate_fields({"calculations": [{"operator": "COUNT"}]})
FILL = (
    "INSERT INTO {table} (workspace_id, environment_id, dataset, service, namespace,"
    " timestamp, id, raw) SETTINGS "
    + settings_clause({"async_insert": 0, **JSON_PARSE_SETTINGS})
    + " SELECT {{ws:String}}, {{env:String}}, 'heavy', 'svc', 'default',"
    " fromUnixTimestamp64Milli(toInt64({{start:Int64}} + number * 10)), toString(number),"
    ' concat(\'{{"message":"slow request \', toString(number),'
    " '\",\"n\":', toString(number), '}}')"
    " FROM numbers({{rows:UInt64}})"
)


def _ms(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


# -- stalled connections ------------------------------------------------------------------


def _open_sockets(server: LiveServer) -> int:
    assert server.proc is not None
    fds = f"/proc/{server.proc.pid}/fd"
    count = 0
    for fd in os.listdir(fds):
        with contextlib.suppress(FileNotFoundError):
            count += os.readlink(f"{fds}/{fd}").startswith("socket:")
    return count


def _stall(server: LiveServer, head: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.sendall(head)
    return sock


def _light_requests(server: LiveServer, key: str) -> tuple[list[float], float]:
    health = [_ms(lambda: httpx.get(f"{server.url}/health", timeout=10)) for _ in range(20)]
    ingest = _ms(lambda: server.send(key, "logs", [{"message": "still here"}]))
    return health, ingest


def _stalled(ctx: BenchContext) -> None:
    env = {"LIMELIGHT_BODY_READ_TIMEOUT": "3", "LIMELIGHT_HEADER_TIMEOUT": "3"}
    server = launch(ctx.scratch("contention-server"), env)
    try:
        tenant = server.new_tenant()
        rows = {"idle": _light_requests(server, tenant.ingest_key)}
        before = _open_sockets(server)
        partial = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
        upload = (
            "POST /events/v1/logs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n"
            f"x-api-key: {tenant.ingest_key}\r\n\r\n{{"
        ).encode()
        held = [_stall(server, partial) for _ in range(HEADS)]
        held += [_stall(server, upload) for _ in range(BODIES)]
        deadline = time.monotonic() + 2.5
        while _open_sockets(server) - before < HEADS + BODIES and time.monotonic() < deadline:
            time.sleep(0.02)
        holding = _open_sockets(server) - before
        rows[f"{holding} stalled held"] = _light_requests(server, tenant.ingest_key)
        for sock in held:
            sock.close()
    finally:
        server.stop()
    print(f"{'server':<22}{'/health median ms':>18}{'/health max ms':>16}{'ingest ms':>11}")
    for name, (health, ingest) in rows.items():
        median, slowest = statistics.median(health), max(health)
        print(f"{name:<22}{median:>18.1f}{slowest:>16.1f}{ingest:>11.1f}")


# -- query runs ---------------------------------------------------------------------------


def _tenant(meta: MetaDB, name: str) -> Tenant:
    with meta.session(immediate=True) as s:
        ws = repos.create_workspace(s, name)
        return Tenant(ws.id, repos.create_environment(s, ws, "prod", redact=False).id)


def _finish(runs: QueryRunService, tenant: Tenant, fields: QueryFields) -> float:
    """Seconds from the run's creation to its outcome."""
    started = time.perf_counter()
    run_id = runs.create(tenant, RunRequest(fields, from_ms=NOW - HOUR, to_ms=NOW)).run["id"]
    done = threading.Event()
    if runs.watch(tenant, run_id, done.set) > 0:
        done.wait(300)
    assert runs.get(tenant, run_id).run["status"] == "COMPLETED"
    return time.perf_counter() - started


def _fairness(data_dir: Path, light_runs: int) -> None:
    meta = migrated_sqlite(data_dir / "meta.db")
    store = ChdbEventStore(data_dir / "chdb")
    store.start()
    runs = QueryRunService(Settings(data_dir=data_dir, query_runs_per_minute=10**6), meta, store)
    runs.start()
    try:
        heavy, light = _tenant(meta, "heavy"), _tenant(meta, "light")
        params = {"ws": heavy.workspace_id, "env": heavy.environment_id}
        params |= {"start": NOW - HOUR, "rows": HEAVY_EVENTS}
        store.command(FILL.format(table=store.table), params)
        ref.store_events(store, light, "light", [{"timestamp": NOW - 1000, "n": 1}] * 10)
        alone = [_finish(runs, light, LIGHT) for _ in range(light_runs)]
        one_heavy = _finish(runs, heavy, HEAVY)
        for _ in range(HEAVY_RUNS):
            runs.create(heavy, RunRequest(HEAVY, from_ms=NOW - HOUR, to_ms=NOW))
        beside = [_finish(runs, light, LIGHT) for _ in range(light_runs)]
    finally:
        runs.close()
        store.close()
        meta.dispose()
    print(f"one heavy run alone: {one_heavy:.2f} s; {HEAVY_RUNS} of them queued first")
    print(f"{'a light run':<34}{'median s':>10}{'max s':>8}")
    for name, waits in (("alone", alone), ("beside the flood", beside)):
        print(f"{name:<34}{statistics.median(waits):>10.3f}{max(waits):>8.3f}")
    print(f"{'first come, first served (est.)':<34}{one_heavy * HEAVY_RUNS:>10.3f}")


def run(ctx: BenchContext) -> None:
    _stalled(ctx)
    _fairness(ctx.scratch("contention-runs"), 3 if ctx.quick else 5)
