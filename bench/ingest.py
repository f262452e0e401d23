"""Ingest throughput: the Events API over loopback beside a direct insert into the same engine.

The same events (about 0.5kb of JSON each) go in three batch shapes (6MB bodies
and 1,000-event bodies from 4 clients, 10-event bodies from 64 clients: the
browser and serverless case; once from one tenant, once spread over 16 tenants, as
on a server that many applications send to) through these paths, in the same run:

- http: concurrent clients POST pre-serialised bodies to ``/events/v1/<dataset>``
  of the live server; a run ends when every request has its 202 and a read of each
  tenant has returned (a read waits for the batches still in the write-ahead log);
- direct: this process opens its own ``ChdbEventStore`` (same engine, same DDL)
  and inserts the same rows, already enriched, with the same concurrency.

The ratio http/direct says what the API costs on top of the engine. A third
path, ``untyped``, inserts the same rows directly into a database of the same
engine without the view that records each JSON path's stored types (DDL 0008):
direct/untyped says what keeping those types costs ingest.
"""

from __future__ import annotations

import http.client
import random
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from limelight.ingest.service import Origin, build_rows
from limelight.settings import MIB
from limelight.store.events.base import PATHS_VIEW, EventRow
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.tenant import Tenant

if TYPE_CHECKING:
    from bench.run import BenchContext

CLIENTS = 4
BATCH_LIMIT = 6 * MIB - 1024  # the largest body the API takes, with a margin
SMALL_BATCH = 1000
TINY_BATCH = 10
TINY_CLIENTS = 64
# Small requests of many applications at once: a group INSERT holds one tenant's
# events (ingest.group_commit), so these make smaller groups than one tenant's.
TINY_TENANTS = 16
SETTLE_S = 1.0

LEVELS = ["debug", "info", "info", "info", "warn", "error"]
ROUTES = ["/api/orders", "/api/orders/{id}", "/api/users/{id}", "/api/cart", "/health"]
METHODS = ["GET", "GET", "GET", "POST", "PUT", "DELETE"]
SERVICES = ["checkout", "orders", "users", "gateway"]
AGENTS = [
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36",
    "okhttp/4.12.0",
]


def make_event(rng: random.Random, at_ms: int) -> dict[str, Any]:
    """A plausible request log line, about 0.5kb as JSON."""
    route = rng.choice(ROUTES)
    status = rng.choice([200, 200, 200, 201, 204, 400, 404, 500])
    return {
        "timestamp": at_ms,
        "level": rng.choice(LEVELS),
        "message": f"{rng.choice(METHODS)} {route} completed with {status}",
        "service": rng.choice(SERVICES),
        "requestId": f"{rng.getrandbits(128):032x}",
        "traceId": f"{rng.getrandbits(64):016x}",
        "http": {
            "method": rng.choice(METHODS),
            "route": route,
            "status": status,
            "userAgent": rng.choice(AGENTS),
            "bytes": rng.randint(100, 90_000),
        },
        "duration": round(rng.lognormvariate(3, 1), 3),
        "user": {"id": rng.randint(1, 50_000), "plan": rng.choice(["free", "pro", "team"])},
        "region": rng.choice(["eu-west-1", "us-east-1", "ap-south-1"]),
        "db": {"queries": rng.randint(0, 12), "ms": round(rng.random() * 40, 2)},
        "cache.hit": rng.random() < 0.7,
        "tags": rng.sample(["web", "mobile", "beta", "canary", "internal", "batch"], 2),
    }


@dataclass
class Batch:
    body: bytes  # the JSON array as sent over HTTP
    rows: list[EventRow]  # the same events enriched, as the direct path stores them
    tenant: int = 0  # which of the run's tenants sends it


def make_span(rng: random.Random, at_ms: int) -> dict[str, Any]:
    """A span as OTLP stores it, about 0.5kb as JSON: four to a trace (the event's time in
    ms says which trace and which of its spans), a root at the gateway and three
    children in one of the routes' services."""
    trace, part = divmod(at_ms, 4)
    service = "gateway" if part < 2 else ROUTES[trace % len(ROUTES)].strip("/").replace("/", "-")
    span: dict[str, Any] = {
        "timestamp": at_ms,
        "service": service,
        "name": ["GET /api/cart", "call orders", "orders handler", "SELECT"][part],
        "traceId": f"{trace * 2654435761 % 2**128:032x}",
        "spanId": f"{rng.getrandbits(64):016x}",
        "kind": ["SERVER", "CLIENT", "SERVER", "INTERNAL"][part],
        "duration": round(rng.expovariate(1 / 40), 3),
        "status": {"code": "ERROR" if rng.random() < 0.02 else "UNSET"},
        "attributes": {
            "http.route": rng.choice(ROUTES),
            "region": rng.choice(["eu-west-1", "us-east-1", "ap-south-1", "eu-west-2"]),
            "user.id": rng.randrange(1, 50_000),
            **{f"noise{i}": f"v{rng.randrange(4)}" for i in range(10)},
        },
    }
    if part:
        span["parentSpanId"] = f"{rng.getrandbits(64):016x}"
    return span


def make_batches(
    count: int,
    per_batch: int | None,
    dataset: str,
    seed: int = 7,
    make: Callable[[random.Random, int], dict[str, Any]] = make_event,
) -> list[Batch]:
    """``count`` events (``make`` each, log lines by default) cut into bodies of
    ``per_batch`` events (None: as many as fit in 6MB)."""
    rng = random.Random(seed)
    start = int(time.time() * 1000) - 3_600_000
    start -= start % 4  # a span's time says which of its trace's four it is (make_span)
    events = [make(rng, start + i) for i in range(count)]
    raws = [orjson.dumps(e) for e in events]
    groups: list[list[int]] = [[]]
    size = 2
    for i, raw in enumerate(raws):
        full = (per_batch is not None and len(groups[-1]) >= per_batch) or (
            size + len(raw) + 1 > BATCH_LIMIT
        )
        if full:
            groups.append([])
            size = 2
        groups[-1].append(i)
        size += len(raw) + 1
    origin = Origin(tenant=Tenant("bench", "bench"), dataset=dataset)
    batches = []
    for group in groups:
        body = b"[" + b",".join(raws[i] for i in group) + b"]"
        rows = build_rows(origin, [(events[i], raws[i]) for i in group], False, False)
        batches.append(Batch(body, rows))
    return batches


def run_concurrently(work: Sequence[Batch], clients: int, send: Callable[[Batch], None]) -> float:
    """Seconds to push every batch through ``send`` from ``clients`` threads."""
    lock = threading.Lock()
    queue = list(reversed(work))
    errors: list[BaseException] = []

    def worker() -> None:
        while True:
            with lock:
                if not queue or errors:
                    return
                batch = queue.pop()
            try:
                send(batch)
            except BaseException as exc:
                with lock:
                    errors.append(exc)
                return

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise errors[0]
    return elapsed


class HttpSender:
    """POSTs bodies to one URL of the live server; one keep-alive connection per client thread.

    The standard library's client, not httpx: the clients share the server's 2 cores, and
    httpx spent 2.2 ms of CPU on each small request, more than the server's own work.
    """

    expected_status = 200

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.path = parts.path
        self.url = url
        self.headers = headers
        self._local = threading.local()
        self._connections: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def post(self, batch: Batch) -> bytes:
        """The answer's body, once the server gave the expected status."""
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=120)
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        connection.request("POST", self.path, body=batch.body, headers=self.headers_for(batch))
        response = connection.getresponse()
        content = response.read()
        if response.status != self.expected_status:
            raise RuntimeError(f"HTTP {response.status}: {content[:300]!r}")
        return content

    def headers_for(self, batch: Batch) -> dict[str, str]:
        return self.headers

    def send(self, batch: Batch) -> None:
        self.post(batch)

    def close(self) -> None:
        for c in self._connections:
            c.close()


class HttpPath(HttpSender):
    """The Events API: JSON arrays to /events/v1/<dataset>, each with the ingest key of the
    tenant that sends it (``keys[batch.tenant]``)."""

    expected_status = 202

    def __init__(self, url: str, key: str, dataset: str, keys: Sequence[str] = ()) -> None:
        super().__init__(
            f"{url}/v1/{dataset}", {"x-api-key": key, "content-type": "application/json"}
        )
        self.keys = list(keys) or [key]

    def headers_for(self, batch: Batch) -> dict[str, str]:
        return {**self.headers, "x-api-key": self.keys[batch.tenant]}


@dataclass
class Measure:
    shape: str
    mode: str
    events: int
    megabytes: float
    seconds: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def events_per_s(self) -> float:
        return self.events / self.median

    @property
    def mb_per_s(self) -> float:
        return self.megabytes / self.median


def print_table(measures: list[Measure]) -> None:
    head = f"{'batches':<22}{'path':<8}{'events':>9}{'MB':>8}{'median s':>10}"
    head += f"{'min s':>8}{'max s':>8}{'events/s':>11}{'MB/s':>8}"
    print(head)
    print("-" * len(head))
    for m in measures:
        print(
            f"{m.shape:<22}{m.mode:<8}{m.events:>9,}{m.megabytes:>8.1f}{m.median:>10.2f}"
            f"{min(m.seconds):>8.2f}{max(m.seconds):>8.2f}{m.events_per_s:>11,.0f}"
            f"{m.mb_per_s:>8.1f}"
        )


def run(ctx: BenchContext) -> None:
    total = 24_000 if ctx.quick else 96_000
    # name: (events per body, clients, events in all, tenants)
    shapes = {
        "6MB": (None, CLIENTS, total, 1),
        f"{SMALL_BATCH:,} events": (SMALL_BATCH, CLIENTS, total, 1),
        f"{TINY_BATCH} events": (TINY_BATCH, TINY_CLIENTS, total // 4, 1),
        f"{TINY_BATCH} events, {TINY_TENANTS} tenants": (
            TINY_BATCH,
            TINY_CLIENTS,
            total // 4,
            TINY_TENANTS,
        ),
    }
    direct = ChdbEventStore(ctx.scratch("direct-chdb"))
    direct.start()
    tenants = [ctx.tenant] + [ctx.server.new_tenant() for _ in range(TINY_TENANTS - 1)]
    direct_tenants = [Tenant(t.workspace_id, t.environment_id) for t in tenants]
    http = HttpPath(
        ctx.server.events_url, ctx.tenant.ingest_key, "bench", [t.ingest_key for t in tenants]
    )

    untyped = ChdbEventStore(ctx.scratch("direct-chdb"), database="untyped")
    untyped.start()
    untyped.command(f"DROP VIEW untyped.{PATHS_VIEW}")

    def insert_direct(batch: Batch) -> None:
        direct.insert(direct_tenants[batch.tenant], batch.rows)

    def insert_untyped(batch: Batch) -> None:
        untyped.insert(direct_tenants[batch.tenant], batch.rows)

    paths: dict[str, Callable[[Batch], None]] = {
        "http": http.send,
        "direct": insert_direct,
        "untyped": insert_untyped,
    }
    # Warm both paths (first parts, connection set-up) before timing.
    warm = make_batches(200, 100, "warmup")
    for send in paths.values():
        run_concurrently(warm, CLIENTS, send)

    results: list[Measure] = []
    ratios: dict[str, float] = {}
    typing_costs: dict[str, float] = {}
    try:
        for shape, (per_batch, clients, count, senders) in shapes.items():
            batches = make_batches(count, per_batch, "bench")
            for i, batch in enumerate(batches):
                batch.tenant = i % senders
            megabytes = sum(len(b.body) for b in batches) / MIB
            measures = {mode: Measure(shape, mode, count, megabytes, []) for mode in paths}
            for repeat in range(ctx.repeats):
                # Alternate which path goes first, and let the engines settle in
                # between: background merges of one run must not land on the other.
                order = list(paths) if repeat % 2 == 0 else list(reversed(paths))
                for mode in order:
                    time.sleep(SETTLE_S)
                    seconds = run_concurrently(batches, clients, paths[mode])
                    if mode == "http":
                        # Until the events are readable, not only acknowledged: small
                        # batches wait in the write-ahead log, which a read empties first.
                        started = time.perf_counter()
                        for t in tenants[:senders]:
                            ctx.server.read(t.admin_key, "bench", limit=1)
                        seconds += time.perf_counter() - started
                    measures[mode].seconds.append(seconds)
            results += measures.values()
            ratios[shape] = measures["http"].events_per_s / measures["direct"].events_per_s
            typing_costs[shape] = measures["direct"].events_per_s / measures["untyped"].events_per_s
            ctx.log(
                f"  {shape}: {len(batches)} requests of about "
                f"{megabytes / len(batches):.3f}MB, {clients} clients, {senders} tenant(s)"
            )
    finally:
        http.close()
        direct.close()
        untyped.close()
    print()
    print_table(results)
    print()
    for shape, ratio in ratios.items():
        print(f"ratio http/direct, {shape} batches: {ratio:.2f}  (target >= 0.5)")
    for shape, ratio in typing_costs.items():
        print(f"ratio direct/untyped (recording path types), {shape} batches: {ratio:.2f}")
