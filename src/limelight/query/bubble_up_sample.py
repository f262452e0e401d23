"""How BubbleUp samples a side: windows of time spread evenly over the side's events.

The ``sides`` statement (``bubble_up.compile_sides``) gives each side's events:
how many, the first and last time, and the times that part them into
``TIME_LEVELS`` equal shares (quantiles from a reservoir of 8,192 of them chosen
by a hash of their times: deterministic). A side of more than ``SIDE_SAMPLE``
events is then read within ``SAMPLE_WINDOWS`` windows of time: the k-th holds
the events of ranks about ``(k + 1/2) * count / SAMPLE_WINDOWS``,
``SIDE_SAMPLE / SAMPLE_WINDOWS`` of them, the events between two quantiles taken
as spread evenly between their times. Placed by rank rather than by time, the
windows follow the events wherever they fall (the last hour of a week, a burst of
a minute); each event has about the same chance of being read; and the windows
are a function of the events alone, so the same events always give the same
sample. A window is at least a millisecond: events of one millisecond are read
all or none, so a side whose events share a few milliseconds (a batch stamped
with one time) may be read whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from limelight.query.sql import Params

# The events read of a side at most (about: the windows hold this many when the events
# between two quantiles are spread evenly). With 10,000 a side the total variation
# distance of two samples of one distribution is about 0.01 for a key of 4 even values
# and 0.04 for one of 50: far below a cause's (0.3 and more in the planted tests).
SIDE_SAMPLE = 10_000
# Windows a sampled side is read in. Each costs more than its events need: the engine
# reads a granule whole, and a compressed block of a key's column spans several
# granules. More windows spread the sample over more of the timeframe; at the same
# ranks of both sides, a side's windows fall about where the other's do, so that what
# changes over time weighs alike on both. The comparison over 1M spans of 35 keys,
# 10,000 events a side, took 0.32, 0.39, 0.42 and 0.41 CPU-seconds in 4, 8, 12 and 16
# windows; 100 events a side, 0.05 in one window and 0.16 in 8 (2026-11-27).
SAMPLE_WINDOWS = 4
# The quantiles of a side's times the windows are placed by: one per 0.2% of its events.
TIME_LEVELS = 500


@dataclass(frozen=True)
class Spread:
    """A side's events in time: how many, the first and last time, and the times at
    ranks ``i * count / TIME_LEVELS`` (``i`` from 1), ascending."""

    count: int
    first: int  # unix ms
    last: int
    times: tuple[float, ...] = ()


Window = tuple[int, int]  # [from, to) in unix ms


def time_levels() -> str:
    """The levels of the quantiles a ``Spread`` holds, as the engine's function takes them."""
    return ", ".join(f"{i / TIME_LEVELS:g}" for i in range(1, TIME_LEVELS))


def sample_windows(
    spread: Spread, sample: int = SIDE_SAMPLE, pieces: int = SAMPLE_WINDOWS
) -> tuple[Window, ...] | None:
    """The windows of time that hold about ``sample`` of the side's events, evenly spread
    over them; None when the side holds no more than ``sample``: all are read."""
    if spread.count <= sample:
        return None
    ranks = [i * spread.count / TIME_LEVELS for i in range(len(spread.times) + 2)]
    ranks[-1] = spread.count
    times = [float(spread.first), *spread.times, float(spread.last + 1)]
    stride, width = spread.count / pieces, sample / pieces
    windows: list[Window] = []
    for k in range(pieces):
        start = k * stride + (stride - width) / 2
        low = int(_time_at(ranks, times, start))
        high = max(int(_time_at(ranks, times, start + width)), low + 1)
        if windows and low <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(high, windows[-1][1]))
        else:
            windows.append((low, high))
    return tuple(windows)


def _time_at(ranks: Sequence[float], times: Sequence[float], rank: float) -> float:
    """The time before which about ``rank`` of the events fall: between two known ranks,
    the events taken as spread evenly in time."""
    for i in range(1, len(ranks)):
        if rank < ranks[i] or i == len(ranks) - 1:
            span = ranks[i] - ranks[i - 1]
            part = (rank - ranks[i - 1]) / span if span > 0 else 0.0
            return times[i - 1] + min(1.0, part) * (times[i] - times[i - 1])
    return times[-1]


def windows_sql(windows: Sequence[Window], params: Params) -> str:
    """The events within any of ``windows``, as ranges of the sort key's time, so that
    the engine reads only the granules they span."""
    ranges = [
        f"timestamp >= fromUnixTimestamp64Milli({params.add(low, 'Int64')})"
        f" AND timestamp < fromUnixTimestamp64Milli({params.add(high, 'Int64')})"
        for low, high in windows
    ]
    return "(" + " OR ".join(ranges) + ")"


@dataclass(frozen=True)
class Sides:
    """The events of each side (selection, baseline), and the windows each is read in
    (None: read whole); ``query`` the windows of the query's events for the profile."""

    counts: tuple[int, int]
    windows: tuple[tuple[Window, ...] | None, tuple[Window, ...] | None] = (None, None)
    query: tuple[Window, ...] | None = None

    @property
    def sampled(self) -> bool:
        return any(w is not None for w in self.windows)
