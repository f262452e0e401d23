"""Free-text search (the needle) over 1M and 10M events, beside COUNT by service.

Uses the events of the queries section (the same data directory: generated
once when both run). Each needle is counted two ways, side by side in one run,
on the same table:
- now: the statement the compiler writes (a needle of letters is looked up in
  the words index of DDL 0011; anything else reads `raw`, with the ngram
  index ruling out granules);
- before: the statement it wrote before the words index, for every needle
  (positionCaseInsensitive over `raw`, with the ngram index's LIKE).
Times are wall medians of ``repeats`` x 5 warm runs in this process (chDB), with
the engine's own elapsed time and bytes read of the last run; the query
condition cache is off, so a repeated needle is not answered from memory.

Then the cost of the indexes at insert: the same events (500,000; 100,000 with
--quick) inserted into a table with no index, the ngram index, the words index
and both, in turns, timed and weighed.
"""

from __future__ import annotations

import statistics
import time
from typing import TYPE_CHECKING, Any

from bench.queries import GENERATE, NEEDLE, NEEDLE_EVERY, SPAN_MS, Size, _data_dir, _prepare
from limelight.query.compile import RunOptions, Timeframe, compile_run
from limelight.query.spec import validate_fields
from limelight.store.events.base import JSON_PARSE_SETTINGS, settings_clause
from limelight.store.events.chdb_store import ChdbEventStore

if TYPE_CHECKING:
    from bench.run import BenchContext

TURNS = 5
NO_CACHE = {"use_query_condition_cache": 0}

# (question, needle or None for COUNT by service)
QUESTIONS: list[tuple[str, dict[str, Any] | None]] = [
    ("COUNT by service (no needle)", None),
    ('common word "timeout" (2% of events)', {"value": "timeout"}),
    ('rare word "quasar" (1 in 100,003)', {"value": "quasar"}),
    ('absent word "absentword"', {"value": "absentword"}),
    ('inside a word: "imeou"', {"value": "imeou"}),
    ('two letters: "ou"', {"value": "ou"}),
    ('with digits: "zq8x-needle" (1 in 999,983)', {"value": NEEDLE}),
    ('matchCase: "Timeout" (none)', {"value": "Timeout", "matchCase": True}),
    ('regex: "up[a-z]+ time(out|d)"', {"value": "up[a-z]+ time(out|d)", "isRegex": True}),
]


def _count_sql(store: ChdbEventStore, size: Size, needle: dict[str, Any] | None) -> tuple[str, Any]:
    fields: dict[str, Any] = {"calculations": [{"operator": "COUNT"}]}
    if needle is None:
        fields["group_bys"] = [{"key": "_service"}]
    else:
        fields["needle"] = needle
    plan = compile_run(
        validate_fields(fields),
        workspace_id=size.tenant.workspace_id,
        environment_id=size.tenant.environment_id,
        table=store.table,
        timeframe=Timeframe(size.frm, size.to),
        options=RunOptions(),
    )
    statement = plan.statements.by_name()["aggregates"]
    return statement.sql, statement.params


def _before(sql: str, params: dict[str, Any], needle: dict[str, Any] | None) -> str:
    """The statement as the compiler wrote it before the words index."""
    if needle is None or needle.get("isRegex") or "translate(lower(raw)" not in sql:
        return sql
    [name] = [k for k, v in params.items() if v == "%" + needle["value"].lower() + "%"]
    words = f"translate(lower(raw), '0123456789', '          ') LIKE {{{name}:String}}"
    params["before_value"] = needle["value"]
    return sql.replace(
        words,
        "(positionCaseInsensitive(raw, {before_value:String}) > 0 "
        f"AND lower(raw) LIKE {{{name}:String}})",
    )


def _no_cache(sql: str) -> str:
    return sql.replace(" SETTINGS ", f" SETTINGS {settings_clause(NO_CACHE)}, ", 1)


def _time(store: ChdbEventStore, sql: str, params: dict[str, Any], runs: int) -> tuple[float, Any]:
    store.query(sql, params)  # warm
    times, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = store.query(sql, params)
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def _searches(ctx: BenchContext, store: ChdbEventStore, size: Size) -> None:
    print(f"\n{size.events:,} events")
    heads = ["now ms", "before ms", "before/now", "engine ms now", "MB read now"]
    heads += ["MB read before", "count"]
    print(f"{'question':44s} " + " ".join(f"{h:>{max(len(h), 8)}s}" for h in heads))
    for question, needle in QUESTIONS:
        sql, params = _count_sql(store, size, needle)
        now_sql, before_sql = _no_cache(sql), _no_cache(_before(sql, params, needle))
        now = before = 0.0
        now_runs: list[float] = []
        before_runs: list[float] = []
        result_now = result_before = None
        for _ in range(TURNS):  # in turns, so a slow minute weighs on both sides
            t, result_now = _time(store, now_sql, params, ctx.repeats)
            now_runs.append(t)
            t, result_before = _time(store, before_sql, params, ctx.repeats)
            before_runs.append(t)
        now, before = statistics.median(now_runs), statistics.median(before_runs)
        assert result_now is not None and result_before is not None
        count = sum(int(r["_count"]) for r in result_now.rows if r["_total"])
        same = count == sum(int(r["_count"]) for r in result_before.rows if r["_total"])
        print(
            f"{question:44s} {now * 1000:8.1f} {before * 1000:9.1f} {before / now:10.2f} "
            f"{result_now.elapsed * 1000:13.1f} {result_now.bytes_read / 1e6:11.1f} "
            f"{result_before.bytes_read / 1e6:14.1f} {count:>8,}{'' if same else ' DIFFERS'}"
        )


INDEXES = {
    "no index": "",
    "ngram (DDL 0003)": ", INDEX raw_ngrams lower(raw) "
    "TYPE ngrambf_v1(4, 65536, 3, 0) GRANULARITY 1",
    "words (DDL 0011)": ", INDEX raw_words translate(lower(raw), '0123456789', '          ') "
    "TYPE text(tokenizer = 'splitByNonAlpha')",
}
INDEXES["both (as now)"] = INDEXES["ngram (DDL 0003)"] + INDEXES["words (DDL 0011)"]


def _insert_costs(ctx: BenchContext, store: ChdbEventStore, size: Size) -> None:
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
    generate = (
        GENERATE.replace("@needle@", NEEDLE)
        .replace("@needle_every@", str(NEEDLE_EVERY))
        .replace("@settings@", settings_clause({"async_insert": 0, **JSON_PARSE_SETTINGS}))
    )
    params = {"ws": "w", "env": "e", "start": size.frm, "span": SPAN_MS, "count": rows,
              "offset": 0, "rows": rows}  # fmt: skip
    seconds: dict[str, list[float]] = {name: [] for name in tables}
    for _ in range(3):
        for name, table in tables.items():
            store.command(f"TRUNCATE TABLE {table}")
            started = time.perf_counter()
            store.command(generate.replace("@table@", table), params)
            seconds[name].append(time.perf_counter() - started)
    print(f"\nindexes at insert: {rows:,} events, one INSERT, medians of 3 in turns")
    print(f"{'table':20s} {'seconds':>8s} {'events/s':>10s} {'index MB':>9s} {'data MB':>8s}")
    for name, table in tables.items():
        db, bare = table.split(".")
        weighed = store.query(
            "SELECT sum(secondary_indices_compressed_bytes) AS i, sum(data_compressed_bytes) AS d "
            "FROM system.parts WHERE database = {db:String} AND table = {t:String} AND active",
            {"db": db, "t": bare},
        ).rows[0]
        took = statistics.median(seconds[name])
        print(f"{name:20s} {took:8.2f} {rows / took:10,.0f} {int(weighed['i']) / 1e6:9.1f} "
              f"{int(weighed['d']) / 1e6:8.1f}")  # fmt: skip
        store.command(f"DROP TABLE {table}")


def run(ctx: BenchContext) -> None:
    counts = [100_000, 1_000_000] if ctx.quick else [1_000_000, 10_000_000]
    data_dir = _data_dir(ctx)
    data_dir.mkdir(parents=True, exist_ok=True)
    sizes = _prepare(ctx, data_dir, counts)
    store = ChdbEventStore(data_dir / "chdb")
    store.start()  # applies DDL 0011 to older data: the index is built in the background
    try:
        started = time.perf_counter()
        while store.query("SELECT count() AS n FROM system.mutations WHERE NOT is_done", {}).rows[
            0
        ]["n"]:
            time.sleep(1)
        ctx.log(f"  words index built for every part ({time.perf_counter() - started:.0f}s)")
        print(f"data: {data_dir}; medians of {TURNS} turns x {ctx.repeats} warm runs")
        for size in sizes:
            _searches(ctx, store, size)
        _insert_costs(ctx, store, sizes[0])
    finally:
        store.close()
