"""BubbleUp's sample of a side: windows of time that hold about ``SIDE_SAMPLE`` of its
events, spread over them by rank, the same for the same events."""

from __future__ import annotations

import random

from limelight.query.bubble_up_sample import (
    SAMPLE_WINDOWS,
    SIDE_SAMPLE,
    TIME_LEVELS,
    Spread,
    sample_windows,
)

WEEK = 7 * 24 * 3_600_000


def _spread(times: list[int]) -> Spread:
    """The events at ``times`` as the sides statement gives them (exact quantiles here,
    where the engine's come from a reservoir)."""
    ordered = sorted(times)
    count = len(ordered)
    levels = tuple(float(ordered[i * count // TIME_LEVELS]) for i in range(1, TIME_LEVELS))
    return Spread(count, ordered[0], ordered[-1], levels)


def _read(times: list[int], windows: tuple[tuple[int, int], ...]) -> list[int]:
    return [t for t in times if any(low <= t < high for low, high in windows)]


def test_a_side_that_fits_its_sample_is_read_whole() -> None:
    times = list(range(0, WEEK, WEEK // SIDE_SAMPLE))[:SIDE_SAMPLE]
    assert sample_windows(_spread(times)) is None
    assert sample_windows(Spread(0, 0, 0)) is None


def test_the_windows_hold_about_the_sample_spread_over_the_whole_side() -> None:
    rnd = random.Random(3)
    times = [rnd.randrange(WEEK) for _ in range(500_000)]
    windows = sample_windows(_spread(times))
    assert windows is not None and len(windows) == SAMPLE_WINDOWS
    assert abs(len(_read(times, windows)) - SIDE_SAMPLE) < 0.05 * SIDE_SAMPLE
    # one window in each eighth of the events, in time order, apart
    assert all(a[1] < b[0] for a, b in zip(windows, windows[1:], strict=False))
    for k, (low, _) in enumerate(windows):
        assert k * WEEK / SAMPLE_WINDOWS <= low < (k + 1) * WEEK / SAMPLE_WINDOWS


def test_the_windows_follow_the_events_where_they_fall() -> None:
    # A week's timeframe whose events are all in its last hour, half of them in a burst
    # of one minute: the windows are within the hour, and the burst holds half the sample.
    rnd = random.Random(4)
    hour = WEEK - 3_600_000
    burst = [WEEK - 600_000 + rnd.randrange(60_000) for _ in range(100_000)]
    times = [hour + rnd.randrange(3_600_000) for _ in range(100_000)] + burst
    windows = sample_windows(_spread(times))
    assert windows is not None and all(hour <= low < high <= WEEK for low, high in windows)
    assert abs(len(_read(times, windows)) - SIDE_SAMPLE) < 0.1 * SIDE_SAMPLE
    assert abs(len(_read(burst, windows)) - SIDE_SAMPLE / 2) < 0.1 * SIDE_SAMPLE


def test_the_same_events_give_the_same_windows() -> None:
    rnd = random.Random(5)
    times = [rnd.randrange(WEEK) for _ in range(50_000)]
    assert sample_windows(_spread(times)) == sample_windows(_spread(list(reversed(times))))
    assert sample_windows(_spread(times), 100, 4) != sample_windows(_spread(times))
