"""Field values and BubbleUp on the engine, over 1M and 10M events (the data of
bench/queries.py); bench/investigate.py times them through the API, over spans.

Times the runner's work for one answer (``runs.investigate``: the lookups of
the keys' types and paths, the statements, the answer's shaping) in this
process, on the engine over the generated events; HTTP adds a few milliseconds.
The events are the queries section's (``LIMELIGHT_BENCH_QUERIES_DIR`` keeps them
for both): 7 days of realistic events of about 0.45 kB and some 25 paths, 70% of
them in the dataset ``logs``. Medians of ``repeats`` warm runs after one cold.

Goals: field values within 1 s over 10M events; BubbleUp within 2 s over 1M.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bench.queries import Size, _data_dir, _prepare
from limelight.query.bubble_up_spec import validate_bubble_up
from limelight.query.plans import Timeframe
from limelight.query.spec import validate_fields
from limelight.runs.investigate import bubble_up, field_values
from limelight.runs.limits import RunLimits
from limelight.settings import Settings
from limelight.store.events.chdb_store import ChdbEventStore

if TYPE_CHECKING:
    from bench.run import BenchContext

LIMITS = RunLimits.from_settings(Settings(query_max_timeframe_days=31))
SERVER_ERRORS = [{"key": "http.status", "operation": ">=", "value": 500}]
VALUES = [
    ("http.method", []),
    ("http.method", SERVER_ERRORS),
    ("requestId", []),
    ("duration", []),
    ("tags", []),
    ("_service", []),
]


def _median(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    fn()  # cold
    times, answer = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        answer = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), answer


def _values(store: ChdbEventStore, size: Size, repeats: int) -> None:
    frame = Timeframe(size.frm, size.to)
    for key, filters in VALUES:
        parsed = validate_fields({"filters": filters}).filters or []

        def one(key: str = key, parsed: Any = parsed) -> dict[str, Any]:
            return field_values(
                store, size.tenant, "logs", key, parsed, frame, 10, LIMITS, time.monotonic() + 60
            )

        seconds, answer = _median(one, repeats)
        where = " (http.status >= 500)" if filters else ""
        print(
            f"  values of {key}{where}: {seconds:.2f} s; {answer['events']:,} events read,"
            f" {answer['distinct']:,} distinct, sampled {answer['sampled']}"
        )


def _bubble_up(store: ChdbEventStore, size: Size, repeats: int) -> None:
    for name, selection in (
        ("duration > 890 (3%)", {"filters": [{"key": "duration", "operation": ">", "value": 890}]}),
        ("http.status >= 500 (30%)", {"filters": SERVER_ERRORS}),
    ):
        body = {"from": size.frm, "to": size.to, "selection": selection}
        request = validate_bubble_up(json.dumps(body).encode())

        def one(request: Any = request) -> dict[str, Any]:
            return bubble_up(store, size.tenant, request, LIMITS, time.monotonic() + 60)

        seconds, answer = _median(one, repeats)
        top = ", ".join(f"{d['key']} {d['score']:.2f}" for d in answer["dimensions"][:3])
        print(
            f"  BubbleUp, {name}: {seconds:.2f} s; {answer['selection']:,} against"
            f" {answer['baseline']:,}, {len(answer['dimensions'])} keys, sampled"
            f" {answer['sampled']}; first: {top}"
        )


def run(ctx: BenchContext) -> None:
    counts = [100_000, 1_000_000] if ctx.quick else [1_000_000, 10_000_000]
    data_dir = _data_dir(ctx)
    data_dir.mkdir(parents=True, exist_ok=True)
    sizes = _prepare(ctx, data_dir, counts)
    store = ChdbEventStore(data_dir / "chdb")
    store.start()
    try:
        for size in sizes:
            print(f"{size.events:,} events over 7 days (medians of {ctx.repeats} warm runs)")
            _values(store, size, ctx.repeats)
            _bubble_up(store, size, ctx.repeats)
    finally:
        store.close()
