"""What an INSERT into the events table costs the engine, change by change.

The same rows (the ingest section's events, about 0.46 kB each) are inserted by
one session into tables of one engine, in turns, in inserts of 12,000 events
(a 6MB body) and of 1,000, without HTTP:

- before: the table and INSERT as they were before DDL 0012: `data` computed from
  `raw` by the column's expression, parts over 10 MB written wide, the needle
  indexes built on insert;
- compact: parts under 32 MB written compact (0012);
- + sent: the event's text sent for `data` too, parsed by the input format;
- + merge: the needle indexes left to merges;
- + chunks (now): the text parsed on several threads in chunks of 1 MiB, where the
  engine's default of 10 MiB left most of a 6MB body's (about 12 MiB with `data`) to
  one (store.events.base.INSERT_SETTINGS);
- text indexes on insert: now, with the words, phrases and numbers indexes (0011,
  0015, 0024) built by the INSERT, the ngram index left to merges: what a needle that
  finds the newest events from the index costs ingest; and with words and phrases
  alone;
- shared data as a map: now, with the JSON column's shared data written as a plain map
  in the parts an insert makes (the engine's cheapest serialization for them; it
  defaults to buckets). Shared data holds the paths past `max_dynamic_paths`, so this
  says whether the serialization matters for events of fewer paths than that;
- before the span columns: now, without the columns DDL 0020 computes from `data` for
  the reads over spans (the trace id's hash, the duration, four flags) and the index of
  the trace ids' hashes, which their 0017 index (an expression over `data`) replaced as
  it was: what those columns cost an INSERT;
- before the trace projections: now, without the two projections (DDL 0021, 0022) that
  the slowest traces read for whole hours (per trace and hour; per trace, hour and
  service): what building them costs an INSERT;
- trace projections of 0021: now, with `trace_hours` as DDL 0021 added it in place of
  0022's `trace_ends` (one aggregate fewer: the last end since the epoch): what that
  aggregate costs an INSERT;
- raw only: a table of the typed columns and `raw` alone (no `data`, no index, no
  paths view), what the engine does without parsing the JSON: the bound.

Every table has the fsync settings of the events table (0002). Each is timed with the
ingest section's log events, then with spans as OTLP stores them (``make_span``).
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bench.ingest import make_batches, make_event, make_span
from limelight.settings import MIB
from limelight.store.events.base import (
    INSERT_COLUMNS,
    INSERT_SETTINGS,
    JSON_PARSE_SETTINGS,
    PARSE_CHUNK_BYTES,
    PATHS_VIEW,
    encode_rows,
    settings_clause,
)
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.store.events.ddl import DdlTarget, ddl_files
from limelight.tenant import Tenant

if TYPE_CHECKING:
    from bench.run import BenchContext

TENANT = Tenant("bench", "bench")
CAST_COLUMNS = ", ".join(c for c in INSERT_COLUMNS if c != "data")
SENT_COLUMNS = ", ".join(INSERT_COLUMNS)
ON_INSERT = {"materialize_skip_indexes_on_insert": 1}
# The span columns of DDL 0020 and their index.
SPAN_COLUMNS = (
    "trace_hash",
    "span_duration",
    "is_span",
    "is_root_span",
    "is_error_span",
    "is_entry_span",
)
DROP_SPAN_COLUMNS = "DROP INDEX trace_hashes, " + ", ".join(
    f"DROP COLUMN {c}" for c in SPAN_COLUMNS
)
# The trace projections (0021, 0022; over the span columns: dropped before them).
DROP_TRACE_PROJECTIONS = "DROP PROJECTION trace_ends, DROP PROJECTION trace_services"


def _trace_hours_0021(database: str) -> str:
    """The statement of DDL 0021 that added `trace_hours`, which 0022's `trace_ends`
    replaced with one aggregate more."""
    text = dict(ddl_files())[21]
    return next(
        s for s in DdlTarget(database).render(text) if "PROJECTION IF NOT EXISTS trace_hours (" in s
    )


# The table as DDL 0017 left it: the span columns dropped, the trace index of 0017 over
# `data` in place of 0020's over the hash column.
BEFORE_SPAN_COLUMNS = (
    f"{DROP_SPAN_COLUMNS}, ADD INDEX trace_ids cityHash64(data.traceId.:String)"
    " TYPE bloom_filter(0.001) GRANULARITY 1"
)


@dataclass(frozen=True)
class Variant:
    name: str
    database: str
    columns: str  # CAST_COLUMNS: `data` from its expression; SENT_COLUMNS: sent
    settings: str


def _variants() -> list[Variant]:
    # The engine's default chunk: one thread parses a text under 10 MiB.
    one_thread = {"min_chunk_bytes_for_parallel_parsing": 10 * MIB}
    cast = settings_clause({"async_insert": 0, **JSON_PARSE_SETTINGS, **ON_INSERT, **one_thread})
    sent = settings_clause({"async_insert": 0, **INSERT_SETTINGS, **ON_INSERT, **one_thread})
    merge = settings_clause({"async_insert": 0, **INSERT_SETTINGS, **one_thread})
    now = settings_clause({"async_insert": 0, **INSERT_SETTINGS})
    # The text indexes (0011, 0015, 0024) built by the INSERT, the ngram index still by
    # merges; and the numbers index left to merges too.
    text_on_insert = (
        settings_clause({"async_insert": 0, **INSERT_SETTINGS, **ON_INSERT})
        + ", exclude_materialize_skip_indexes_on_insert = 'raw_ngrams'"
    )
    two_on_insert = text_on_insert.replace("'raw_ngrams'", "'raw_ngrams,raw_numbers_keys'")
    bound = settings_clause(
        {
            "async_insert": 0,
            **JSON_PARSE_SETTINGS,
            "min_chunk_bytes_for_parallel_parsing": PARSE_CHUNK_BYTES,
        }
    )
    return [
        Variant("before", "bench_insert_before", CAST_COLUMNS, cast),
        Variant("compact (0012)", "bench_insert_now", CAST_COLUMNS, cast),
        Variant("+ data sent", "bench_insert_now", SENT_COLUMNS, sent),
        Variant("+ indexes on merge", "bench_insert_now", SENT_COLUMNS, merge),
        Variant("+ 1 MiB chunks (now)", "bench_insert_now", SENT_COLUMNS, now),
        Variant("text indexes on insert", "bench_insert_now", SENT_COLUMNS, text_on_insert),
        Variant("words+phrases on insert", "bench_insert_now", SENT_COLUMNS, two_on_insert),
        Variant("shared data as a map", "bench_insert_map", SENT_COLUMNS, now),
        Variant("before the span columns", "bench_insert_no_spans", SENT_COLUMNS, now),
        Variant("before trace projections", "bench_insert_no_trace_hours", SENT_COLUMNS, now),
        Variant("trace projections of 0021", "bench_insert_trace_hours", SENT_COLUMNS, now),
        Variant("raw only (the bound)", "bench_insert_raw", CAST_COLUMNS, bound),
    ]


def _tables(ctx: BenchContext) -> dict[str, ChdbEventStore]:
    path = ctx.scratch("ingest-table")
    stores = {}
    for database in (
        "bench_insert_before",
        "bench_insert_now",
        "bench_insert_map",
        "bench_insert_no_spans",
        "bench_insert_no_trace_hours",
        "bench_insert_trace_hours",
        "bench_insert_raw",
    ):
        store = ChdbEventStore(path, database=database)
        store.start()
        stores[database] = store
    before = stores["bench_insert_before"]
    before.command(f"ALTER TABLE {before.table} MODIFY SETTING min_bytes_for_wide_part = 10485760")
    mapped = stores["bench_insert_map"]
    mapped.command(
        f"ALTER TABLE {mapped.table} MODIFY SETTING "
        "object_shared_data_serialization_version_for_zero_level_parts = 'map'"
    )
    no_spans = stores["bench_insert_no_spans"]
    no_spans.command(f"ALTER TABLE {no_spans.table} {DROP_TRACE_PROJECTIONS}")
    no_spans.command(f"ALTER TABLE {no_spans.table} {BEFORE_SPAN_COLUMNS}")
    no_hours = stores["bench_insert_no_trace_hours"]
    no_hours.command(f"ALTER TABLE {no_hours.table} {DROP_TRACE_PROJECTIONS}")
    hours = stores["bench_insert_trace_hours"]
    hours.command(f"ALTER TABLE {hours.table} DROP PROJECTION trace_ends")
    hours.command(_trace_hours_0021("bench_insert_trace_hours"))
    bare = stores["bench_insert_raw"]
    bare.command(f"DROP VIEW {bare.table.split('.')[0]}.{PATHS_VIEW}")
    bare.command(f"ALTER TABLE {bare.table} DROP INDEX raw_ngrams")
    bare.command(f"ALTER TABLE {bare.table} DROP INDEX raw_words")
    bare.command(f"ALTER TABLE {bare.table} DROP INDEX raw_phrases")
    bare.command(f"ALTER TABLE {bare.table} DROP INDEX raw_numbers_keys")
    bare.command(f"ALTER TABLE {bare.table} {DROP_TRACE_PROJECTIONS}")
    bare.command(f"ALTER TABLE {bare.table} {DROP_SPAN_COLUMNS}")
    bare.command(f"ALTER TABLE {bare.table} DROP COLUMN data")
    return stores


def run(ctx: BenchContext) -> None:
    events = 24_000 if ctx.quick else 60_000
    stores = _tables(ctx)
    variants = _variants()
    try:
        for kind, make in (("log events", make_event), ("spans", make_span)):
            print(_timed(stores, variants, kind, events, make, max(3, ctx.repeats)))
    finally:
        for store in stores.values():
            store.close()


def _timed(
    stores: dict[str, ChdbEventStore],
    variants: list[Variant],
    kind: str,
    events: int,
    make: Callable[[random.Random, int], dict[str, Any]],
    repeats: int,
) -> str:
    """Each variant's INSERTs of ``events`` events of ``make``, in turns: a table of
    events/s."""
    results: dict[tuple[str, int], list[float]] = {}
    for per in (12_000, 1_000):
        batches = make_batches(events, per, "bench", make=make)
        sent = [encode_rows(TENANT, b.rows).decode() for b in batches]
        # Without `data` (the last field of each line), for the INSERTs that do not send it.
        cast = ["\n".join(line.rsplit("\t", 1)[0] for line in b.split("\n")) for b in sent]
        for repeat in range(repeats):
            order = variants if repeat % 2 == 0 else list(reversed(variants))
            for v in order:
                store = stores[v.database]
                store.command(f"TRUNCATE TABLE {store.table}")
                time.sleep(0.5)
                started = time.perf_counter()
                for body in cast if v.columns == CAST_COLUMNS else sent:
                    store.command(
                        f"INSERT INTO {store.table} ({v.columns}) SETTINGS {v.settings} "
                        f"FORMAT TSV\n{body}"
                    )
                results.setdefault((v.name, per), []).append(time.perf_counter() - started)
    lines = [
        f"{events:,} {kind}, one session, medians of {repeats} in turns; events/s",
        f"{'table and INSERT':28s} {'12,000 per INSERT':>18s} {'1,000 per INSERT':>17s}",
    ]
    for v in variants:
        big = events / statistics.median(results[(v.name, 12_000)])
        small = events / statistics.median(results[(v.name, 1_000)])
        lines.append(f"{v.name:28s} {big:18,.0f} {small:17,.0f}")
    return "\n".join(lines)
