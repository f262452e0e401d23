"""Free-text search (the needle) over 1M and 10M events, beside COUNT by service.

The events are the queries section's API logs (``bench.queries.GENERATE``), one in
50 with an error message as payment services write them (``payment failed:
card_declined by issuer (order 48213), code ERR-42``), in a data directory of this
section's own, written in INSERTs of 12,000 events (what a 6MB body holds) with the
Events API's settings: the needle indexes are left to merges.

Each question is a COUNT as the compiler writes it, timed in two states of the
same events, side by side with a COUNT by service in turns:
- just written: merges stopped, so every part is as its INSERT wrote it, without
  the needle indexes (this process's engine; the API adds the same few ms to both);
- merged: one part a day, every index built; timed in this process and through
  the API (``POST /v1/query_run`` + ``GET /v1/query_run/<id>?wait=`` on a server
  started on the directory).
Times are wall medians of ``TURNS`` x ``repeats`` warm runs; the query condition
cache is off in this process (a server keeps it on: a needle asked twice is the
second time answered from memory, so each API run asks it as if new, see
``_api``). The engine's bytes read are those of the last run.

Then the cost of the indexes at insert: the same events (500,000; 100,000 with
--quick) inserted into a table with no index and with each index, in turns,
timed and weighed.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import orjson
from tests.support import launch

from bench.generated import SPAN_MS, load, make_tenants
from bench.queries import GENERATE, NEEDLE, NEEDLE_EVERY, Size, _run_through_api
from limelight.errors import StoreError
from limelight.query.compile import RunOptions, Timeframe, compile_run
from limelight.query.needle import CASED, CASED_NUMBERS, DIGIT_RUNS, NUMBERS, PHRASES, WORDS
from limelight.query.spec import validate_fields
from limelight.store.events.base import JSON_PARSE_SETTINGS, settings_clause
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant

if TYPE_CHECKING:
    from bench.run import BenchContext

TURNS = 3
# LIMELIGHT_BENCH_SEARCH_MERGED_ONLY=1: the merged state alone (over 10M events, the
# unmerged parts' full reads take hours of this machine).
JUST_WRITTEN = os.environ.get("LIMELIGHT_BENCH_SEARCH_MERGED_ONLY") != "1"
NO_CACHE = {"use_query_condition_cache": 0}
BODY_EVENTS = 12_000
# The settings of an Events API INSERT that matter here: the needle indexes are built
# when parts merge (store.events.base.INSERT_SETTINGS).
LOAD_SETTINGS = {"async_insert": 0, **JSON_PARSE_SETTINGS, "materialize_skip_indexes_on_insert": 0}
ERRORS = (
    "if(number % 50 = 9, concat(' payment failed: card_declined by issuer (order ',"
    " toString(h2 % 100000), '), code ERR-', toString(h2 % 100)), ''),"
)

# (question, needle or None for COUNT by service)
QUESTIONS: list[tuple[str, dict[str, Any] | None]] = [
    ("COUNT by service (no needle)", None),
    ("word: declined (2%)", {"value": "declined"}),
    ("phrase: payment failed (2%)", {"value": "payment failed"}),
    ("snake_case: card_declined (2%)", {"value": "card_declined"}),
    ("across punctuation: issuer (order (2%)", {"value": "issuer (order"}),
    ("path: /api/cart (20%)", {"value": "/api/cart"}),
    ("dotted key: cache.hit (all)", {"value": "cache.hit"}),
    ('across JSON: "level":"error (17%)', {"value": '"level":"error'}),
    ("number with a word: order 12 (0.02%)", {"value": "order 12"}),
    ("code: ERR-42 (0.02%)", {"value": "ERR-42"}),
    ('number in JSON: "status":50 (30%)', {"value": '"status":50'}),
    ('whole number in JSON: "status":500 (10%)', {"value": '"status":500'}),
    ("number after a word: with 503 (10%)", {"value": "with 503"}),
    ("number alone: 503 (10%)", {"value": "503"}),
    ("whole number: (order 48213) (rare)", {"value": "(order 48213)"}),
    (f"id: {NEEDLE} (1 in 999,983)", {"value": NEEDLE}),
    ("rare word: quasar (1 in 100,003)", {"value": "quasar"}),
    ("absent phrase: payment refused", {"value": "payment refused"}),
    ("two characters: ou", {"value": "ou"}),
    ("one character: _", {"value": "_"}),
    ("matchCase: Payment failed (none)", {"value": "Payment failed", "matchCase": True}),
    ("matchCase: payment failed (2%)", {"value": "payment failed", "matchCase": True}),
    ("matchCase: card_declined by (2%)", {"value": "card_declined by", "matchCase": True}),
    ("matchCase with a number: code ERR-42 (0.02%)", {"value": "code ERR-42", "matchCase": True}),
    ('matchCase across JSON: "level":"error (17%)', {"value": '"level":"error', "matchCase": True}),
    ("matchCase with a number: (order 4 (0.2%)", {"value": "(order 4", "matchCase": True}),
    (
        'matchCase, three digits: "status":500 (10%)',
        {"value": '"status":500', "matchCase": True},
    ),
    ("matchCase, three digits: with 503 (10%)", {"value": "with 503", "matchCase": True}),
    ("regex: card_dec[a-z]+ed by (2%)", {"value": "card_dec[a-z]+ed by", "isRegex": True}),
    ("regex: quas[a-z]r (rare)", {"value": "quas[a-z]r", "isRegex": True}),
    ("regex: up[a-z]+ time(out|d)", {"value": "up[a-z]+ time(out|d)", "isRegex": True}),
    (
        "regex, cased: Payment [a-z]+ (none)",
        {"value": "Payment [a-z]+", "isRegex": True, "matchCase": True},
    ),
    ("regex, many tokens: e[a-z]+ (all)", {"value": "e[a-z]+", "isRegex": True}),
    ("regex with digits: order 4[0-9]+ (0.2%)", {"value": "order 4[0-9]+", "isRegex": True}),
    ("regex with digits: code ERR-[0-9]+ (2%)", {"value": "code ERR-[0-9]+", "isRegex": True}),
    (
        'regex with digits: "status":5[0-9]{2} (30%)',
        {"value": '"status":5[0-9]{2}', "isRegex": True},
    ),
    ("regex of digits: 50[0-9] (45%)", {"value": "50[0-9]", "isRegex": True}),
    ("regex, plain text: card_declined (2%)", {"value": "card_declined", "isRegex": True}),
]


def _fields(needle: dict[str, Any] | None) -> dict[str, Any]:
    fields: dict[str, Any] = {"calculations": [{"operator": "COUNT"}]}
    if needle is None:
        fields["group_bys"] = [{"key": "_service"}]
    else:
        fields["needle"] = needle
    return fields


def _count_sql(store: ChdbEventStore, size: Size, needle: dict[str, Any] | None) -> tuple[str, Any]:
    plan = compile_run(
        validate_fields(_fields(needle)),
        workspace_id=size.tenant.workspace_id,
        environment_id=size.tenant.environment_id,
        table=store.table,
        timeframe=Timeframe(size.frm, size.to),
        options=RunOptions(),
        dictionaries=store.table,
    )
    statement = plan.statements.by_name()["aggregates"]
    sql = statement.sql.replace(" SETTINGS ", f" SETTINGS {settings_clause(NO_CACHE)}, ", 1)
    return sql, statement.params


def _median_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000


def _direct(ctx: BenchContext, store: ChdbEventStore, size: Size) -> dict[str, tuple[float, Any]]:
    """question -> (median ms, last result), the questions in turns."""
    statements = {q: _count_sql(store, size, needle) for q, needle in QUESTIONS}
    for q, (sql, params) in list(statements.items()):
        try:
            store.query(sql, params)  # warm
        except StoreError as exc:  # past a run's time limit: noted, not timed again
            ctx.log(f"  {q}: {str(exc).splitlines()[0][:100]}")
            del statements[q]
    times: dict[str, list[float]] = {q: [] for q in statements}
    results: dict[str, Any] = {}
    for _ in range(TURNS):
        for q, (sql, params) in list(statements.items()):
            try:
                for _ in range(ctx.repeats):
                    started = time.perf_counter()
                    results[q] = store.query(sql, params)
                    times[q].append(time.perf_counter() - started)
            except StoreError as exc:  # past the limit on a busier turn: noted, dropped
                ctx.log(f"  {q}: {str(exc).splitlines()[0][:100]}")
                del statements[q]
    return {q: (_median_ms(times[q]), results[q]) for q in statements}


def _count_of(rows: list[dict[str, Any]]) -> int:
    return sum(int(r["_count"]) for r in rows if r["_total"])


def _api(ctx: BenchContext, url: str, size: Size) -> dict[str, tuple[float, int]]:
    """question -> (median ms, count) through the API. The server's query condition
    cache would answer a repeated needle from memory, so each run asks its needle in a
    new time range (the timeframe's end one millisecond later each time): the same
    events, the same work, a question the cache has not seen."""
    times: dict[str, list[float]] = {q: [] for q, _ in QUESTIONS}
    counts: dict[str, int] = {}
    shift = 0
    with httpx.Client(base_url=url, headers={"Authorization": size.admin_key}, timeout=120) as c:

        def body(needle: dict[str, Any] | None) -> dict[str, Any]:
            nonlocal shift
            shift += 1
            return {"query": _fields(needle), "from": size.frm, "to": size.to + shift}

        asked = []
        for q, needle in QUESTIONS:
            warm = _run_through_api(c, body(needle), timed=False)
            if warm["query_run"]["status"] == "COMPLETED":
                asked.append((q, needle))
            else:  # past a run's time limit: noted, not timed again
                ctx.log(f"  {q}: {warm['query_run'].get('error')}")
                del times[q]
        for _ in range(TURNS):
            for q, needle in list(asked):
                try:
                    for _ in range(ctx.repeats):
                        run_body = body(needle)
                        started = time.perf_counter()
                        answer = _run_through_api(c, run_body)
                        times[q].append(time.perf_counter() - started)
                        counts[q] = sum(
                            int(next(iter(a["values"].values())))
                            for a in answer["data"]["aggregates"]
                        )
                except RuntimeError as exc:  # past the limit on a busier turn: noted, dropped
                    ctx.log(f"  {q}: {exc}")
                    asked.remove((q, needle))
                    del times[q]
    return {q: (_median_ms(times[q]), counts[q]) for q in times}


def _print_direct(title: str, timed: dict[str, tuple[float, Any]]) -> None:
    base = timed[QUESTIONS[0][0]][0]
    print(f"\n{title}")
    print(f"{'question':46s} {'ms':>8s} {'x COUNT':>8s} {'MB read':>8s} {'count':>9s}")
    for q, _ in QUESTIONS:
        if q not in timed:
            print(f"{q:46s} past the run's time limit")
            continue
        ms, result = timed[q]
        count = _count_of(result.rows)
        print(f"{q:46s} {ms:8.1f} {ms / base:8.2f} {result.bytes_read / 1e6:8.1f} {count:9,}")


def _print_api(title: str, timed: dict[str, tuple[float, int]]) -> None:
    base = timed[QUESTIONS[0][0]][0]
    print(f"\n{title}")
    print(f"{'question':46s} {'ms':>8s} {'x COUNT':>8s} {'count':>9s}")
    for q, _ in QUESTIONS:
        if q not in timed:
            print(f"{q:46s} past the run's time limit")
            continue
        ms, count = timed[q]
        print(f"{q:46s} {ms:8.1f} {ms / base:8.2f} {count:9,}")


def _data_dir(ctx: BenchContext) -> Path:
    kept = os.environ.get("LIMELIGHT_BENCH_SEARCH_DIR")
    return Path(kept) if kept else ctx.scratch("search")


def _generate(settings: dict[str, int]) -> str:
    """The queries section's events, with the error messages; @table@ left to fill."""
    timeout = "if(number % 50 = 7, ' upstream timeout', ''),"
    sql = (
        GENERATE.replace(timeout, f"{timeout} {ERRORS}")
        .replace("@needle@", NEEDLE)
        .replace("@needle_every@", str(NEEDLE_EVERY))
        .replace("@settings@", settings_clause(settings))
    )
    assert ERRORS in sql
    return sql


def _load(ctx: BenchContext, store: ChdbEventStore, size: Size) -> None:
    sql = _generate(LOAD_SETTINGS).replace("@table@", store.table)
    # Merged alone, the inserts' size does not matter: a million at a time is faster.
    took = load(store, size, sql, BODY_EVENTS if JUST_WRITTEN else 1_000_000)
    ctx.log(f"  wrote {size.events:,} events in {took:.0f}s")


def _size(data_dir: Path, events: int) -> Size:
    meta = MetaDB(f"sqlite:///{data_dir / 'meta.db'}")
    meta.migrate()
    [(tenant, key)] = make_tenants(meta, [events]).values()
    meta.dispose()
    end = int(time.time() * 1000) - 60_000
    return Size(events, tenant, key, end - SPAN_MS, end + 1)


def _kept(data_dir: Path) -> Size | None:
    """The merged events a previous run left in a kept directory (the merged state
    alone: 10M events take this machine an hour to write and merge)."""
    manifest = data_dir / "bench-search.json"
    if JUST_WRITTEN or not manifest.exists():
        return None
    s = orjson.loads(manifest.read_bytes())
    return Size(s["events"], Tenant(s["ws"], s["env"]), s["key"], s["frm"], s["to"])


def _keep(data_dir: Path, size: Size) -> None:
    saved = {"events": size.events, "ws": size.tenant.workspace_id,
             "env": size.tenant.environment_id, "key": size.admin_key, "frm": size.frm,
             "to": size.to}  # fmt: skip
    (data_dir / "bench-search.json").write_bytes(orjson.dumps(saved))


def _settle(ctx: BenchContext, store: ChdbEventStore) -> None:
    """Wait for the mutations that build an index a newer DDL file added to parts
    written before it: until they end, a needle reads those parts whole."""
    database, table = store.table.split(".")
    started = time.perf_counter()
    sql = (
        "SELECT count() AS n FROM system.mutations WHERE database = {d:String}"
        " AND table = {t:String} AND NOT is_done"
    )
    while int(store.query(sql, {"d": database, "t": table}, ["n"]).rows[0]["n"]):
        time.sleep(5)
    ctx.log(f"  mutations done after {time.perf_counter() - started:.0f}s")


def _searches(ctx: BenchContext, data_dir: Path, events: int) -> None:
    kept = _kept(data_dir)
    size = kept or _size(data_dir, events)
    store = ChdbEventStore(data_dir / "chdb")
    store.start()
    try:
        if kept is None:
            if JUST_WRITTEN:
                store.command(f"SYSTEM STOP MERGES {store.table}")
            _load(ctx, store, size)
            if JUST_WRITTEN:
                title = f"{events:,} events just written (merges stopped)"
                _print_direct(title, _direct(ctx, store, size))
                store.command(f"SYSTEM START MERGES {store.table}")
            started = time.perf_counter()
            store.command(f"OPTIMIZE TABLE {store.table} FINAL")
            ctx.log(f"  merged in {time.perf_counter() - started:.0f}s")
            if not JUST_WRITTEN:
                _keep(data_dir, size)
        else:
            ctx.log(f"  reusing the merged events in {data_dir}")
        _settle(ctx, store)
        _print_direct(f"{events:,} events merged, this process", _direct(ctx, store, size))
    finally:
        store.close()
    # Each question is asked 3 x 3 times and once to warm: past the 300 run creations a
    # minute a workspace gets by default, so the bench's server allows more.
    server = launch(
        data_dir / "server",
        {"LIMELIGHT_DATA_DIR": str(data_dir), "LIMELIGHT_QUERY_RUNS_PER_MINUTE": "100000"},
    )
    try:
        _print_api(f"{events:,} events merged, through the API", _api(ctx, server.url, size))
    finally:
        server.stop()


INDEXES = {
    "no index": "",
    "ngram (DDL 0003)": ", INDEX raw_ngrams lower(raw) "
    "TYPE ngrambf_v1(4, 65536, 3, 0) GRANULARITY 1",
    "words (DDL 0011)": f", INDEX raw_words {WORDS} TYPE text(tokenizer = 'splitByNonAlpha')",
    "phrases (DDL 0015)": f", INDEX raw_phrases {PHRASES} TYPE text(tokenizer = 'splitByNonAlpha')",
    "numbers (DDL 0027)": f", INDEX raw_numbers_keys {NUMBERS} "
    "TYPE text(tokenizer = 'splitByNonAlpha')",
    "cased (DDL 0019)": f", INDEX raw_cased {CASED} TYPE text(tokenizer = 'splitByNonAlpha')",
    "cased numbers (0027)": f", INDEX raw_cased_numbers_keys {CASED_NUMBERS} "
    "TYPE text(tokenizer = 'splitByNonAlpha')",
    "digit runs (0026)": f", INDEX raw_digit_runs {DIGIT_RUNS} TYPE text(tokenizer = ngrams(3))",
}
INDEXES["all (as now)"] = "".join(v for k, v in INDEXES.items() if k != "no index")


def _insert_costs(ctx: BenchContext, store: ChdbEventStore) -> None:
    rows = 100_000 if ctx.quick else 500_000
    columns = (
        "workspace_id LowCardinality(String), environment_id LowCardinality(String), "
        "dataset LowCardinality(String), service LowCardinality(String), "
        "namespace LowCardinality(String), timestamp DateTime64(3, 'UTC'), id String, "
        "raw String CODEC(ZSTD(1))"
    )
    tables = {}
    for n, (name, index) in enumerate(INDEXES.items()):
        table = f"{store.table}_bench_index_{n}"
        store.command(f"DROP TABLE IF EXISTS {table}")
        store.command(
            f"CREATE TABLE {table} ({columns}{index}) ENGINE = MergeTree "
            "PARTITION BY toDate(timestamp) "
            "ORDER BY (workspace_id, environment_id, dataset, timestamp)"
        )
        tables[name] = table
    generate = _generate({"async_insert": 0, **JSON_PARSE_SETTINGS})
    params = {"ws": "w", "env": "e", "start": 1_795_000_000_000, "span": SPAN_MS, "count": rows,
              "offset": 0, "rows": rows}  # fmt: skip
    seconds: dict[str, list[float]] = {name: [] for name in tables}
    for _ in range(3):
        for name, table in tables.items():
            store.command(f"TRUNCATE TABLE {table}")
            started = time.perf_counter()
            store.command(generate.replace("@table@", table), params)
            seconds[name].append(time.perf_counter() - started)
    print(f"\nindexes at insert: {rows:,} events, one INSERT, medians of 3 in turns")
    print(f"{'table':20s} {'seconds':>8s} {'events/s':>10s} {'us/event':>9s} {'index MB':>9s} "
          f"{'data MB':>8s}")  # fmt: skip
    bare_s = statistics.median(seconds["no index"])
    for name, table in tables.items():
        db, bare = table.split(".")
        weighed = store.query(
            "SELECT sum(secondary_indices_compressed_bytes) AS i, sum(data_compressed_bytes) AS d "
            "FROM system.parts WHERE database = {db:String} AND table = {t:String} AND active",
            {"db": db, "t": bare},
        ).rows[0]
        took = statistics.median(seconds[name])
        added = (took - bare_s) / rows * 1e6
        print(f"{name:20s} {took:8.2f} {rows / took:10,.0f} {added:9.2f} "
              f"{int(weighed['i']) / 1e6:9.1f} {int(weighed['d']) / 1e6:8.1f}")  # fmt: skip
        store.command(f"DROP TABLE {table}")


def run(ctx: BenchContext) -> None:
    counts = [100_000, 1_000_000] if ctx.quick else [1_000_000, 10_000_000]
    if os.environ.get("LIMELIGHT_BENCH_SEARCH_SIZES"):
        counts = [int(n) for n in os.environ["LIMELIGHT_BENCH_SEARCH_SIZES"].split(",")]
    print(f"medians of {TURNS} turns x {ctx.repeats} warm runs, questions in turns")
    for events in counts:
        data_dir = _data_dir(ctx) / f"{events}"
        data_dir.mkdir(parents=True, exist_ok=True)
        _searches(ctx, data_dir, events)
    if os.environ.get("LIMELIGHT_BENCH_SEARCH_INSERTS") == "0":
        return
    store = ChdbEventStore(_data_dir(ctx) / "inserts")
    store.start()
    try:
        _insert_costs(ctx, store)
    finally:
        store.close()
