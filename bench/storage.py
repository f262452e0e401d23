"""What the events take on disk, and what compressing `data` with ZSTD rather than the
engine's default LZ4 would save and cost the queries bench.

Uses the events of the queries section (the same data directory: generated once
when both run). The largest size's events are copied into two databases of the
same engine, one as the DDL makes it (`data` in the engine's default LZ4) and one
with `data` in ZSTD(1); both are merged to one part per day.
Then:
- stored bytes of each column over the events' NDJSON bytes, per table;
- the queries bench's questions (bench/queries.py, the runner and the hand-written
  SQL, without HTTP) on both tables, in turns, medians of ROUNDS x ``repeats``.
"""

from __future__ import annotations

import statistics
import time
from typing import TYPE_CHECKING, Any

from bench.queries import QUESTIONS, Size, _data_dir, _prepare, _time_direct
from limelight.store.events.base import INSERT_COLUMNS
from limelight.store.events.chdb_store import ChdbEventStore

if TYPE_CHECKING:
    from bench.run import BenchContext

ROUNDS = 3
TABLES = {"ZSTD(1)": "bench_codec_zstd", "LZ4 (now)": "bench_codec_lz4"}
ZSTD = "JSON(max_dynamic_paths = 256) MATERIALIZED raw::JSON CODEC(ZSTD(1))"


def _copy(ctx: BenchContext, source: ChdbEventStore, size: Size, database: str) -> ChdbEventStore:
    """The size's events in a database of their own, merged."""
    store = ChdbEventStore(source.path, database=database)
    store.start()
    found = _codec(store, database)
    if database == TABLES["ZSTD(1)"] and not found:
        store.command(f"ALTER TABLE {store.table} MODIFY COLUMN data {ZSTD}")
        found = _codec(store, database)
    ctx.log(f"  {database}: data {found or 'with the default codec (LZ4)'}")
    have = store.query(f"SELECT count() AS n FROM {store.table}", {}, ["n"]).rows[0]["n"]
    if int(have) == size.events:
        return store  # copied by an earlier run on a kept directory
    store.command(f"TRUNCATE TABLE {store.table}")
    columns = ", ".join(INSERT_COLUMNS)
    started = time.perf_counter()
    store.command(
        f"INSERT INTO {store.table} ({columns}) SETTINGS insert_allow_materialized_columns = 1 "
        f"SELECT {columns} FROM {source.table} "
        "WHERE workspace_id = {ws:String} AND environment_id = {env:String}",
        {"ws": size.tenant.workspace_id, "env": size.tenant.environment_id},
    )
    store.command(f"OPTIMIZE TABLE {store.table} FINAL")
    took = time.perf_counter() - started
    ctx.log(f"  copied {size.events:,} events to {database} in {took:.0f}s")
    return store


def _codec(store: ChdbEventStore, database: str) -> str:
    return str(
        store.query(
            "SELECT compression_codec AS c FROM system.columns "
            "WHERE database = {db:String} AND table = 'events' AND name = 'data'",
            {"db": database},
            ["c"],
        ).rows[0]["c"]
    )


def _weigh(store: ChdbEventStore, raw_bytes: int) -> dict[str, float]:
    database, table = store.table.split(".")
    columns = store.query(
        "SELECT column, sum(column_data_compressed_bytes) AS b FROM system.parts_columns "
        "WHERE database = {db:String} AND table = {t:String} AND active GROUP BY column",
        {"db": database, "t": table},
    ).rows
    whole = store.query(
        "SELECT sum(bytes_on_disk) AS b, sum(secondary_indices_compressed_bytes) AS i "
        "FROM system.parts WHERE database = {db:String} AND table = {t:String} AND active",
        {"db": database, "t": table},
    ).rows[0]
    out = {c["column"]: int(c["b"]) / raw_bytes for c in columns}
    out["indexes"] = int(whole["i"]) / raw_bytes
    out["table"] = int(whole["b"]) / raw_bytes
    return out


def run(ctx: BenchContext) -> None:
    counts = [100_000, 1_000_000] if ctx.quick else [1_000_000, 10_000_000]
    data_dir = _data_dir(ctx)
    data_dir.mkdir(parents=True, exist_ok=True)
    size = _prepare(ctx, data_dir, counts)[-1]
    source = ChdbEventStore(data_dir / "chdb")
    source.start()
    stores: dict[str, ChdbEventStore] = {}
    try:
        for name, database in TABLES.items():
            stores[name] = _copy(ctx, source, size, database)
        raw_bytes = int(
            source.query(
                f"SELECT sum(length(raw) + 1) AS b FROM {source.table} "
                "WHERE workspace_id = {ws:String} AND environment_id = {env:String}",
                {"ws": size.tenant.workspace_id, "env": size.tenant.environment_id},
                ["b"],
            ).rows[0]["b"]
        )
        weights = {name: _weigh(store, raw_bytes) for name, store in stores.items()}
        sizes = {name: Size(size.events, size.tenant, "", size.frm, size.to) for name in stores}
        for _ in range(ROUNDS):
            for name, store in stores.items():
                _time_direct(store, sizes[name], ctx.repeats)
    finally:
        for store in stores.values():
            store.close()
        source.close()
    _print(size, raw_bytes, weights, sizes)


def _print(
    size: Size, raw_bytes: int, weights: dict[str, dict[str, float]], sizes: dict[str, Size]
) -> None:
    now, before = list(TABLES)  # ZSTD, beside the LZ4 of the DDL
    print(f"\n{size.events:,} events, {raw_bytes / 1e6:,.0f} MB as NDJSON; stored bytes / NDJSON")
    print(f"{'column':16s} {now:>14s} {before:>14s}")
    keys = sorted(weights[now], key=lambda k: -weights[before].get(k, 0))
    for key in keys:
        print(f"{key:16s} {weights[now][key]:14.3f} {weights[before].get(key, 0):14.3f}")
    print(f"\nqueries bench, ms (medians of {ROUNDS} rounds), ratio ZSTD / LZ4")
    head = f"{'question':44s} {'path':8s} {'ZSTD':>9s} {'LZ4':>9s} {'ratio':>7s}"
    print(head)
    print("-" * len(head))
    ratios: list[float] = []
    for q in QUESTIONS:
        for path in ("runner", "hand"):
            a = _median(sizes[now], q.name, path)
            b = _median(sizes[before], q.name, path)
            ratios.append(a / b)
            print(f"{q.name[:44]:44s} {path:8s} {a * 1000:9.1f} {b * 1000:9.1f} {a / b:7.2f}")
    print(f"largest ratio ZSTD / LZ4: {max(ratios):.2f}")


def _median(size: Size, question: str, path: str) -> float:
    timings: Any = size.timings[question][path]
    return statistics.median(timings)
