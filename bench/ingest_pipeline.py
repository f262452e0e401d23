"""What the Events API's own work costs an event, stage by stage, without HTTP or engine.

The ingest section's events (about 0.46 kB each) go through the pipeline a request
runs in its worker thread (``ingest_body`` without the INSERT): parse and check the
body, enrich the events into rows, encode the rows as the INSERT's text. In one
process, in turns:

- default: Python's garbage collector as a program starts with it;
- serving: as the serving process sets it (``http_server.settle_heap``): the heap of
  start-up frozen, the young generation collected every 10,000 allocations.

The server's modules are imported first, so the heap is a server's, not a script's.
Figures are µs of this process's CPU an event, medians of the rounds.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import limelight.app  # noqa: F401  (a serving process's heap)
from bench.ingest import make_batches
from limelight.http_server import settle_heap
from limelight.ingest.batch import IngestLimits, parse_batch
from limelight.ingest.redact import may_hold_secrets
from limelight.ingest.service import Origin, build_rows
from limelight.store.events.base import encode_rows
from limelight.tenant import Tenant

if TYPE_CHECKING:
    from bench.run import BenchContext

LIMITS = IngestLimits(max_event_bytes=256 * 1024, max_events=100_000, max_stored_bytes=1 << 30)
ORIGIN = Origin(Tenant("bench", "bench"), "bench")
STAGES = ("parse and check", "enrich", "encode", "all")


def _pipeline(body: bytes, spent: dict[str, float]) -> bytes:
    clock = time.process_time
    started = clock()
    batch = parse_batch(body, LIMITS)
    parsed = clock()
    events = [(v.event, v.raw) for v in batch.valid]
    rows = build_rows(ORIGIN, events, may_hold_secrets(body), batch.exact)
    enriched = clock()
    text = encode_rows(ORIGIN.tenant, rows)
    done = clock()
    spent["parse and check"] += parsed - started
    spent["enrich"] += enriched - parsed
    spent["encode"] += done - enriched
    spent["all"] += done - started
    return text


def _round(bodies: list[bytes], events: int) -> dict[str, float]:
    spent = dict.fromkeys(STAGES, 0.0)
    for body in bodies:
        _pipeline(body, spent)
    return {stage: seconds / events * 1e6 for stage, seconds in spent.items()}


def _serving() -> Callable[[], None]:
    """Set the collector as the serving process does; return what restores the default."""
    threshold = gc.get_threshold()
    settle_heap()

    def restore() -> None:
        gc.unfreeze()
        gc.set_threshold(*threshold)

    return restore


def run(ctx: BenchContext) -> None:
    events = 24_000 if ctx.quick else 96_000
    shapes = {"6MB": None, "1,000 events": 1_000, "10 events": 10}
    rounds = max(3, ctx.repeats)
    print(f"{events:,} events a shape, µs of CPU an event, medians of {rounds} rounds in turns")
    print(f"{'batches':<14}{'collector':<10}" + "".join(f"{s:>17}" for s in STAGES))
    for shape, per in shapes.items():
        bodies = [b.body for b in make_batches(events, per, "bench")]
        results: dict[str, list[dict[str, float]]] = {"default": [], "serving": []}
        for repeat in range(rounds):
            for mode in ("default", "serving") if repeat % 2 == 0 else ("serving", "default"):
                restore = _serving() if mode == "serving" else None
                try:
                    results[mode].append(_round(bodies, events))
                finally:
                    if restore is not None:
                        restore()
        for mode, measured in results.items():
            medians = [statistics.median(m[stage] for m in measured) for stage in STAGES]
            print(f"{shape:<14}{mode:<10}" + "".join(f"{m:>17.2f}" for m in medians))
