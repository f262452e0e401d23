"""What the tenant guard costs: the compiler's statements with and without the check that
no condition widens the tenant filter, and the store's check that a statement is one
Scope made, in turns in one process.

- compile: every golden case (tests/unit/query/golden_cases.py) compiled once with the
  check and once without (``scope._refuse_widening`` replaced by nothing), ROUNDS
  times, which goes first alternating; medians of the CPU time for all the cases, and
  their ratio;
- read check: ``require_scoped`` on a statement, per call, beside a call of a function
  that does nothing, for scale.

    PYTHONPATH=src .venv/bin/python -m bench.scope_guard
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from tests.unit.query.golden_cases import CASES
from tests.unit.query.test_golden import compile_case

from limelight.query import scope as scope_module
from limelight.scoped import require_scoped

if TYPE_CHECKING:
    from bench.run import BenchContext

ROUNDS = 60
CALLS = 200_000


def _compile_all() -> None:
    for name in CASES:
        compile_case(name)


def _timed(work: Callable[[], None]) -> float:
    # CPU time of this process: on a shared machine the wall time holds others' turns.
    start = time.process_time()
    work()
    return time.process_time() - start


def _per_call(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    for _ in range(CALLS):
        work()
    return (time.perf_counter() - start) / CALLS


def measure(rounds: int = ROUNDS) -> list[str]:
    checked = scope_module._refuse_widening  # turned off for the comparison
    on: list[float] = []
    off: list[float] = []
    _compile_all()  # warm
    for i in range(rounds):  # which goes first alternates, so neither has the warmer turn
        for checking in (True, False) if i % 2 else (False, True):
            scope_module._refuse_widening = checked if checking else (lambda _sql: None)
            try:
                (on if checking else off).append(_timed(_compile_all))
            finally:
                scope_module._refuse_widening = checked
    statement = next(iter(compile_case("events_all").statements.by_name().values()))
    guard, bare = [], []
    for _ in range(5):
        guard.append(_per_call(lambda: require_scoped(statement)))
        bare.append(_per_call(lambda: statement))
    on_ms, off_ms = statistics.median(on) * 1e3, statistics.median(off) * 1e3
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return [
        f"scope guard (load average {load}; medians of {rounds} rounds, in turns)",
        f"  compile {len(CASES)} golden cases: {on_ms:.2f} ms checked, {off_ms:.2f} ms not"
        f" ({on_ms / off_ms:.3f}x)",
        f"  require_scoped: {statistics.median(guard) * 1e9:.0f} ns a read"
        f" (a call doing nothing: {statistics.median(bare) * 1e9:.0f} ns)",
    ]


def run(ctx: BenchContext) -> None:
    for line in measure(10 if ctx.quick else ROUNDS):
        ctx.log(line)


if __name__ == "__main__":
    for line in measure():
        print(line)
