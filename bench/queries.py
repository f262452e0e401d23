"""Query runs over 1M and 10M events: the query-run API beside SQL run directly on the engine.

Loading. 10M events through the Events API would take longer than the rest of
the benchmark together, and a second process cannot open the live server's
engine. So this section builds a data directory of its own: this process
opens a chDB engine on it and generates realistic events with one
``INSERT ... SELECT FROM numbers()`` per million (ClickHouse builds each
event's JSON text; the ``data`` JSON column is materialised from it exactly as
on ingest), writes a workspace with one environment per size and admin keys
into the directory's metadata, and times the direct SQL. Then it closes the
engine, starts a real ``limelight serve`` on the same directory and times the
same questions through ``POST /v1/query_run`` + ``GET /v1/query_run/<id>?wait=``.

Timings per question, medians of ROUNDS x ``repeats`` warm runs (the direct paths and
the API take turns, ROUNDS times):
- api: wall time of ``POST /v1/query_run`` + ``GET /v1/query_run/<id>?wait=``
  until COMPLETED, over HTTP on loopback (the contract's two calls);
- api 1rt: the same run created with ``POST /v1/query_run?wait=`` (one round trip);
- runner: the runner's own work for that run without HTTP (the lookup of the
  types its keys are stored as, ``execute_plan``: the compiler's statements as
  the runner runs them, and shaping the result);
  what the API adds is the difference;
- untyped: the runner reading every type a JSON value may be stored as, not
  only the types the tenant's events hold (``keys.StoredTypes``), for scale;
- hand: hand-written SQL giving the same answer as the API: the totals and the
  per-bucket series of a calculation, the page and (when the page is full) the
  count of an events query, written with what the writer knows of this data
  (requestId is a string, status an integer). This is the direct SQL of the target;
- bare: one hand-written statement for the bare question (totals only, the
  page only), for scale: what the series and the count cost.

Set LIMELIGHT_BENCH_QUERIES_DIR to keep the generated data between runs.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import orjson
from tests.support import launch

from bench.generated import INSERT_SETTINGS, Generated, prepare
from limelight.errors import StoreError
from limelight.query.compile import Plan, RunOptions, Timeframe, compile_run, granularity_for
from limelight.query.keys import UNKNOWN, StoredTypes
from limelight.query.spec import validate_fields
from limelight.runs.execute import execute_plan, typed_plan
from limelight.runs.limits import RunLimits
from limelight.settings import Settings
from limelight.store.events.chdb_store import ChdbEventStore

if TYPE_CHECKING:
    from bench.run import BenchContext

NEEDLE = "zq8x-needle"
NEEDLE_EVERY = 999_983  # a prime: about one event in a million holds the needle
TARGET_SECONDS = 1.0
TARGET_RATIO = 1.25
ROUNDS = 5

# One event per row, built by ClickHouse from hashes of the row number (about 0.45kb).
# @name@ marks what is filled in before the statement runs ({name:Type} are parameters).
GENERATE = """
INSERT INTO @table@ (workspace_id, environment_id, dataset, service, namespace, timestamp, id, raw)
SETTINGS @settings@
SELECT {ws:String}, {env:String}, dataset, service, 'default', fromUnixTimestamp64Milli(ms),
       concat(lower(hex(ms)), lower(hex(n))), raw
FROM (
    SELECT number AS n,
        cityHash64(number, 1) AS h,
        sipHash64(number, 2) AS h2,
        toInt64({start:Int64} + intDiv(number * {span:Int64}, {count:UInt64})) AS ms,
        multiIf(h % 10 < 7, 'logs', h % 10 < 9, 'requests', 'audit') AS dataset,
        ['checkout', 'orders', 'users', 'gateway', 'search', 'payments', 'auth', 'inventory']
            [bitShiftRight(h, 8) % 8 + 1] AS service,
        ['debug', 'info', 'info', 'info', 'warn', 'error'][bitShiftRight(h, 12) % 6 + 1] AS level,
        ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'][bitShiftRight(h, 16) % 6 + 1] AS method,
        ['/api/orders', '/api/orders/{id}', '/api/users/{id}', '/api/cart', '/health']
            [bitShiftRight(h, 20) % 5 + 1] AS route,
        [200, 200, 200, 201, 204, 400, 404, 500, 502, 503][bitShiftRight(h, 24) % 10 + 1] AS status,
        ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 Safari/605.1.15',
         'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36',
         'okhttp/4.12.0'][bitShiftRight(h, 28) % 3 + 1] AS agent,
        ['web', 'mobile', 'beta', 'canary', 'internal', 'batch'] AS tags,
        concat(
            '{"timestamp":', toString(ms),
            ',"level":"', level,
            '","message":"', method, ' ', route, ' completed with ', toString(status),
            if(number % @needle_every@ = 17, ' @needle@', ''),
            -- words for bench/search.py: one in 50 events, one in 100,003
            if(number % 50 = 7, ' upstream timeout', ''),
            if(number % 100003 = 11, ' quasar', ''),
            '","service":"', service,
            '","requestId":"', leftPad(lower(hex(h2)), 16, '0'), leftPad(lower(hex(h)), 16, '0'),
            '","traceId":"', lower(hex(bitShiftRight(h2, 3))),
            '","http":{"method":"', method, '","route":"', route,
            '","status":', toString(status), ',"userAgent":"', agent,
            '","bytes":', toString(100 + bitShiftRight(h2, 40) % 90000),
            '},"duration":', toString(round(exp((bitShiftRight(h2, 8) % 7000000) / 1000000.0), 3)),
            ',"user":{"id":', toString(1 + bitShiftRight(h, 32) % 50000),
            ',"plan":"', ['free', 'pro', 'team'][bitShiftRight(h, 48) % 3 + 1],
            '"},"region":"', ['eu-west-1', 'us-east-1', 'ap-south-1'][bitShiftRight(h, 52) % 3 + 1],
            '","db":{"queries":', toString(bitShiftRight(h2, 16) % 13),
            ',"ms":', toString(round((bitShiftRight(h2, 20) % 4000) / 100.0, 2)),
            '},"cache.hit":', if(bitShiftRight(h2, 24) % 10 < 7, 'true', 'false'),
            ',"tags":["', tags[bitShiftRight(h2, 28) % 6 + 1],
            '","', tags[bitShiftRight(h2, 32) % 6 + 1], '"]}'
        ) AS raw
    FROM numbers({offset:UInt64}, {rows:UInt64})
)
"""


@dataclass(frozen=True)
class Question:
    name: str
    query: dict[str, Any]
    # Statements; {table} is the events table, {where} the tenant and time filter,
    # @buckets@ the number of buckets; {step:Int64} and {frm:Int64} are parameters.
    hand: tuple[str, ...]  # the same answer as the API, run side by side
    bare: str  # the bare question
    limit: int = 100
    # A new needle for every run: ClickHouse's query condition cache remembers the
    # granules a repeated filter ruled out, which a repeated search would enjoy.
    fresh_needle: bool = False

    def needle(self, run: int) -> str:
        return f"absent-{run}-{time.time_ns()}" if self.fresh_needle else NEEDLE

    def query_for(self, needle: str) -> dict[str, Any]:
        if "needle" not in self.query:
            return self.query
        return {**self.query, "needle": {"value": needle}}


TENANT_TIME = (
    "workspace_id = {ws:String} AND environment_id = {env:String} AND "
    "timestamp >= fromUnixTimestamp64Milli({frm:Int64}) AND "
    "timestamp < fromUnixTimestamp64Milli({to:Int64})"
)
EVENT_COLUMNS = (
    "raw, toUnixTimestamp64Milli(timestamp) AS _timestamp, dataset AS _dataset, "
    "service AS _service, namespace AS _namespace, id AS _id"
)
BUCKET = "toUInt32(intDiv(toUnixTimestamp64Milli(timestamp) - {{frm:Int64}}, {{step:Int64}}))"
DURATION = "coalesce(toFloat64(data.duration.:Int64), data.duration.:Float64)"

# The hand-written needle search; the LIKE lets it use the ngram index on lower(raw).
NEEDLE_WHERE = (
    "{where} AND positionCaseInsensitive(raw, {{needle:String}}) > 0"
    " AND lower(raw) LIKE {{like:String}}"
)
NEEDLE_SQL = (
    f"SELECT {EVENT_COLUMNS} FROM {{table}} WHERE {NEEDLE_WHERE} ORDER BY timestamp DESC LIMIT 100"
)
NEWEST_SQL = (
    f"SELECT {EVENT_COLUMNS} FROM {{table}} WHERE {{where}} AND dataset = {{{{ds:String}}}}"
    " ORDER BY timestamp DESC LIMIT 100"
)

QUESTIONS = [
    Question(
        "COUNT by service",
        {"calculations": [{"operator": "COUNT"}], "group_bys": [{"key": "_service"}]},
        (
            f"SELECT service, count(), countResample(0, @buckets@, 1)({BUCKET})"
            " FROM {table} WHERE {where} GROUP BY service",
        ),
        "SELECT service, count() AS c FROM {table} WHERE {where} GROUP BY service ORDER BY c DESC",
    ),
    Question(
        "P99(duration) by service, status >= 500",
        {
            "calculations": [{"operator": "P99", "key": "duration"}],
            "group_bys": [{"key": "_service"}],
            "filters": [{"key": "http.status", "operation": ">=", "value": 500}],
        },
        (
            f"SELECT service, quantileExactInclusive(0.99)({DURATION}),"
            f" quantileExactInclusiveResample(0.99, 0, @buckets@, 1)({DURATION}, {BUCKET})"
            " FROM {table} WHERE {where} AND data.http.status.:Int64 >= 500 GROUP BY service",
        ),
        f"SELECT service, quantileExactInclusive(0.99)({DURATION}) AS p FROM {{table}}"
        " WHERE {where} AND data.http.status.:Int64 >= 500 GROUP BY service ORDER BY p DESC",
    ),
    Question(
        "COUNT_DISTINCT(requestId)",
        {"calculations": [{"operator": "COUNT_DISTINCT", "key": "requestId"}]},
        (
            f"SELECT {BUCKET} AS b, uniqCombined64(20)(data.requestId.:String) FROM {{table}}"
            " WHERE {where} GROUP BY GROUPING SETS ((), (b))",
        ),
        "SELECT uniqCombined64(20)(data.requestId.:String) FROM {table} WHERE {where}",
    ),
    # 11 matches: the page is not full, so it tells the count.
    Question("needle search", {"needle": {"value": NEEDLE}}, (NEEDLE_SQL,), NEEDLE_SQL),
    Question(
        "needle search, a new needle each run",
        {"needle": {"value": NEEDLE}},
        (NEEDLE_SQL,),
        NEEDLE_SQL,
        fresh_needle=True,
    ),
    Question(
        "newest 100 events of a dataset",
        {"namespaces": [{"type": "dataset", "value": "logs"}]},
        (
            NEWEST_SQL,
            "SELECT count() FROM {table} WHERE {where} AND dataset = {{ds:String}}",
        ),
        NEWEST_SQL,
    ),
]


@dataclass
class Size(Generated):
    timings: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    failures: dict[str, list[str]] = field(default_factory=dict)  # direct SQL errors

    def add(self, question: str, path: str, seconds: float) -> None:
        self.timings.setdefault(question, {}).setdefault(path, []).append(seconds)

    def median(self, question: str, path: str) -> float:
        return statistics.median(self.timings[question][path])


# ---------------------------------------------------------------- loading


def _data_dir(ctx: BenchContext) -> Path:
    kept = os.environ.get("LIMELIGHT_BENCH_QUERIES_DIR")
    return Path(kept) if kept else ctx.scratch("queries")


def _prepare(ctx: BenchContext, data_dir: Path, counts: list[int]) -> list[Size]:
    """Generate the data (or reuse a kept directory that has it)."""
    sql = GENERATE.replace("@needle@", NEEDLE).replace("@needle_every@", str(NEEDLE_EVERY))
    generated = prepare(ctx, data_dir, counts, "queries", "events", _filled(sql))
    return [Size(g.events, g.tenant, g.admin_key, g.frm, g.to) for g in generated]


def _filled(sql: str) -> Callable[[str], str]:
    """The statement for a table, with the insert's settings."""
    return lambda table: sql.replace("@table@", table).replace("@settings@", INSERT_SETTINGS)


# ---------------------------------------------------------------- timing


def _timed(fn: Callable[[], Any], failures: list[str] | None = None) -> float:
    """Seconds ``fn`` took; an engine error (a 10 s timeout) is noted and timed too."""
    started = time.perf_counter()
    try:
        fn()
    except StoreError as exc:
        if failures is None:
            raise
        failures.append(str(exc).splitlines()[0][:120])
    return time.perf_counter() - started


def _side_by_side(
    store: ChdbEventStore, beside: ThreadPoolExecutor, statements: list[tuple[str, dict[str, Any]]]
) -> None:
    """Like the run service: the first statement here, the others beside it."""
    (first_sql, first_params), *others = statements
    futures = [beside.submit(store.query, sql, params) for sql, params in others]
    store.query(first_sql, first_params)
    for f in futures:
        f.result()


def _time_direct(store: ChdbEventStore, size: Size, repeats: int) -> None:
    beside = ThreadPoolExecutor(2)
    limits = RunLimits.from_settings(Settings())
    timeframe = Timeframe(size.frm, size.to)
    step = granularity_for(timeframe, None)
    buckets = -(-(size.to - size.frm) // step)

    def runner(q: Question, needle: str, typed: bool = True) -> Callable[[], None]:
        fields = validate_fields(q.query_for(needle))

        def compile_with(stored: StoredTypes) -> Plan:
            return compile_run(
                fields,
                workspace_id=size.tenant.workspace_id,
                environment_id=size.tenant.environment_id,
                table=store.table,
                timeframe=timeframe,
                options=RunOptions(limit=q.limit),
                stored=stored,
            )

        # As the runner does it (the stored types looked up, which statements, side by
        # side or not, shaping), without HTTP.
        def run() -> None:
            plan = compile_with(UNKNOWN)
            if typed:
                plan = typed_plan(store, size.tenant, fields, plan, compile_with, limits)
            execute_plan(store, plan, limits, time.monotonic() + 60, beside)

        return run

    def written(sqls: tuple[str, ...], needle: str) -> Callable[[], None]:
        params = {
            "ws": size.tenant.workspace_id,
            "env": size.tenant.environment_id,
            "frm": size.frm,
            "to": size.to,
            "step": step,
            "needle": needle,
            "like": f"%{needle.lower()}%",  # the needles hold no LIKE wildcards
            "ds": "logs",
        }
        statements = [
            (
                sql.format(table=store.table, where=TENANT_TIME).replace("@buckets@", str(buckets)),
                params,
            )
            for sql in sqls
        ]
        return lambda: _side_by_side(store, beside, statements)

    paths: dict[str, Callable[[Question, str], Callable[[], None]]] = {
        "runner": runner,
        "untyped": lambda q, needle: runner(q, needle, typed=False),
        "hand": lambda q, needle: written(q.hand, needle),
        "bare": lambda q, needle: written((q.bare,), needle),
    }
    try:
        for q in QUESTIONS:
            failures = size.failures.setdefault(q.name, [])
            for make in paths.values():  # warm: marks, caches, page cache
                _timed(make(q, q.needle(-1)), failures)
            for i in range(repeats):
                # Alternate, so that background work weighs on all alike.
                for path, make in paths.items():
                    size.add(q.name, path, _timed(make(q, q.needle(i)), failures))
    finally:
        beside.shutdown()


def _run_through_api(
    client: httpx.Client,
    body: dict[str, Any],
    one_round_trip: bool = False,
    timed: bool = True,
) -> dict[str, Any]:
    """Create a run and poll until it settles; with ``one_round_trip`` the creation waits.

    A timed run must complete: a fast failure is not a timing. (The warm run's
    answer is printed, failed or not.)"""
    # Answers are parsed with orjson, as the direct paths parse the engine's rows.
    created = client.post("/v1/query_run", json=body, params={"wait": 30} if one_round_trip else {})
    created.raise_for_status()
    result: dict[str, Any] = orjson.loads(created.content)
    run_id = result["query_run"]["id"]
    # The creation's answer holds no data (only the status, even of a run that finished
    # in the meantime): the contract's client always asks for the run.
    while result["query_run"]["status"] == "STARTED" or "data" not in result:
        polled = client.get(f"/v1/query_run/{run_id}", params={"wait": 30})
        polled.raise_for_status()
        result = orjson.loads(polled.content)
    if timed and result["query_run"]["status"] != "COMPLETED":
        raise RuntimeError(f"query run failed: {result['query_run'].get('error')}")
    return result


def _time_api(url: str, size: Size, repeats: int) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    with httpx.Client(base_url=url, headers={"Authorization": size.admin_key}, timeout=60) as c:
        for q in QUESTIONS:

            def body(needle: str, q: Question = q) -> dict[str, Any]:
                return {"query": q.query_for(needle), "from": size.frm, "to": size.to}

            warm = _run_through_api(c, body(q.needle(-1)), timed=False)
            answers[q.name] = warm["data"] or warm["query_run"]
            for i in range(repeats):
                run_body = body(q.needle(i))  # built before the clock starts
                size.add(q.name, "api", _timed(lambda b=run_body: _run_through_api(c, b)))
                run_body = body(q.needle(repeats + i))
                size.add(
                    q.name,
                    "api 1rt",
                    _timed(lambda b=run_body: _run_through_api(c, b, one_round_trip=True)),
                )
    return answers


# ---------------------------------------------------------------- report


def _summary(question: str, data: dict[str, Any]) -> str:
    if "status" in data:  # the run itself: it failed
        return f"FAILED: {data.get('error')}"
    if "aggregates" in data:
        first = data["aggregates"][0]["values"] if data["aggregates"] else {}
        shown = {k: round(v, 2) if isinstance(v, float) else v for k, v in first.items()}
        return f"{len(data['aggregates'])} groups, first {shown}"
    return f"{len(data['events'])} events of {data['count']:,}"


PATHS = ("api", "api 1rt", "runner", "untyped", "hand", "bare")


def _print(sizes: list[Size], answers: dict[int, dict[str, Any]]) -> None:
    head = (
        f"{'events':>11}  {'question':<40}"
        + "".join(f"{p + ' s':>11}" for p in PATHS)
        + f"{'api/hand':>10}{'1rt/hand':>10}{'api/runner':>12}"
    )
    print(head)
    print("-" * len(head))
    misses = []
    for size in sizes:
        for q in QUESTIONS:
            t = {p: size.median(q.name, p) for p in PATHS}
            print(
                f"{size.events:>11,}  {q.name:<40}"
                + "".join(f"{t[p]:>11.3f}" for p in PATHS)
                + f"{t['api'] / t['hand']:>10.2f}{t['api 1rt'] / t['hand']:>10.2f}"
                + f"{t['api'] / t['runner']:>12.2f}"
            )
            if size.events < 10_000_000:
                continue
            if t["api"] >= TARGET_SECONDS:
                misses.append(f"{q.name}: {t['api']:.2f}s over 10M (target < {TARGET_SECONDS:g}s)")
            if t["api"] / t["hand"] > TARGET_RATIO:
                misses.append(
                    f"{q.name}: api/hand {t['api'] / t['hand']:.2f} (target <= {TARGET_RATIO})"
                )
    print()
    for size in sizes:
        for q in QUESTIONS:
            summary = _summary(q.name, answers[size.events][q.name])
            print(f"  {size.events:>11,}  {q.name:<40}{summary}")
    print()
    for size in sizes:
        for name, errors in size.failures.items():
            if errors:
                print(
                    f"  {size.events:>11,}  {name}: direct SQL failed {len(errors)}x: {errors[0]}"
                )
    print(
        "targets (10M): every run under 1s through the API (create + poll), within 1.25x"
        " of the hand-written SQL giving the same answer"
    )
    for miss in misses:
        print(f"  missed: {miss}")
    if not misses:
        print("  all met")


def run(ctx: BenchContext) -> None:
    counts = [100_000, 1_000_000] if ctx.quick else [1_000_000, 10_000_000]
    repeats = ctx.repeats
    data_dir = _data_dir(ctx)
    data_dir.mkdir(parents=True, exist_ok=True)
    sizes = _prepare(ctx, data_dir, counts)

    # One engine per data directory: the direct paths (this process) and the API (a
    # server process) take turns, ROUNDS times, so that a slower minute of this shared
    # machine weighs on both sides alike.
    answers: dict[int, dict[str, Any]] = {}
    for round_no in range(1, ROUNDS + 1):
        store = ChdbEventStore(data_dir / "chdb")
        store.start()
        try:
            for size in sizes:
                _time_direct(store, size, repeats)
        finally:
            store.close()
        ctx.log(f"  round {round_no}/{ROUNDS}: direct SQL timed; starting a server on the data")
        server = launch(data_dir / "server", {"LIMELIGHT_DATA_DIR": str(data_dir)})
        try:
            answers = {size.events: _time_api(server.url, size, repeats) for size in sizes}
        finally:
            server.stop()
        ctx.log(f"  round {round_no}/{ROUNDS}: API timed")
    print(f"data: {data_dir} ({', '.join(f'{n:,}' for n in counts)} events over 7 days)")
    print(f"medians of {ROUNDS} x {repeats} warm runs, direct and API in turns\n")
    _print(sizes, answers)
