"""Rate limiting: a sliding-window counter per key, counted in one process or shared.

The count is a sliding window estimated from the current and the previous
fixed window (the approach of Cloudflare and many others): two numbers per key.
Where they are kept is a ``WindowCounts``: this process's memory (one process
serves the embedded mode), the metadata database, or Redis, so that several
API processes share one limit per key. A hit is counted first and checked
after (and taken back when over the limit), so concurrent hits in any number
of processes never pass the limit together.

Written here rather than taken from a library because what we need is small
and the libraries in this space (limits, slowapi) bring decorators and
storage layers of their own around the same two counts.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from limelight.errors import RateLimited


class WindowCounts(Protocol):
    """Counts per key and window; a window is named by its start (whole seconds since
    the epoch), the window before it starts ``length`` seconds earlier."""

    def add(self, key: str, start: int, length: int, delta: int) -> tuple[int, int]:
        """Add ``delta`` to ``key``'s count in the window at ``start``; the counts of that
        window and of the window before, after the addition."""

    def read(self, key: str, start: int, length: int) -> tuple[int, int]:
        """The counts of the window at ``start`` and of the window before."""


class MemoryCounts:
    """This process's counts; keys of windows long gone are forgotten as keys pile up."""

    MAX_KEYS = 100_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, int], int] = {}

    def add(self, key: str, start: int, length: int, delta: int) -> tuple[int, int]:
        with self._lock:
            count = max(0, self._counts.get((key, start), 0) + delta)
            self._counts[(key, start)] = count
            if len(self._counts) > self.MAX_KEYS:
                self._forget(start - length)
            return count, self._counts.get((key, start - length), 0)

    def read(self, key: str, start: int, length: int) -> tuple[int, int]:
        with self._lock:
            return self._counts.get((key, start), 0), self._counts.get((key, start - length), 0)

    def _forget(self, before: int) -> None:
        for stale in [k for k in self._counts if k[1] < before]:
            del self._counts[stale]


class RateLimiter:
    """At most ``limit`` hits per ``window`` seconds for each key.

    ``name`` keeps the counts of different limiters apart in a shared store. The
    clock is wall time: processes share it, where each has its own monotonic clock.
    """

    def __init__(
        self,
        limit: int,
        window: float,
        clock: Callable[[], float] = time.time,
        counts: WindowCounts | None = None,
        name: str = "limit",
    ) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._counts: WindowCounts = counts or MemoryCounts()
        self._prefix = f"{name}/{window:g}:"
        self._length = max(1, math.ceil(window))

    def _estimate(self, current: int, previous: int, now: float) -> float:
        elapsed = (now % self._length) / self._length
        return current + previous * (1 - elapsed)

    def _wait(self, now: float, current: int, previous: int) -> int:
        """Whole seconds until the estimate of ``current`` and ``previous`` is under the
        limit again: later in this window, as the previous window's share fades, or in
        the next, as this one's does. The end of this window alone was too soon after a
        heavy hit: a client retrying then was refused again for a minute."""
        into = now % self._length
        if current < self.limit and previous > 0:
            # current + previous * (1 - e) < limit, e the share of the window gone by
            seconds = (1 - (self.limit - current) / previous) * self._length - into
        else:
            # current * (1 - e) < limit, e of the next window
            seconds = self._length - into + max(0.0, 1 - self.limit / current) * self._length
        return max(1, math.ceil(seconds))

    def hit(self, key: str, weight: int = 1) -> int:
        """Count a hit of ``weight``, or raise ``RateLimited`` (429 with Retry-After) when the
        limit was reached before it: a heavy hit may pass the limit once, and the ones after
        it wait until the window has slid past it.

        Returns the window the hit was counted in, for ``give_back``.
        """
        now = self._clock()
        start = self._start(now)
        current, previous = self._counts.add(self._prefix + key, start, self._length, weight)
        if self._estimate(current - weight, previous, now) >= self.limit:
            self._counts.add(self._prefix + key, start, self._length, -weight)
            raise RateLimited(
                self._wait(now, current - weight, previous),
                f"rate limit of {self.limit} per {self.window:g}s reached",
            )
        return start

    def give_back(self, key: str, window: int, weight: int = 1) -> None:
        """Uncount a hit made in ``window`` (it stops counting two windows on anyway)."""
        self._counts.add(self._prefix + key, window, self._length, -weight)

    def blocked(self, key: str) -> bool:
        now = self._clock()
        current, previous = self._counts.read(self._prefix + key, self._start(now), self._length)
        return self._estimate(current, previous, now) >= self.limit

    def _start(self, now: float) -> int:
        return int(now // self._length) * self._length


class RedisCounts:
    """Counts in Redis: one key per window, expiring after two windows."""

    def __init__(self, url: str) -> None:
        import redis

        self._redis: Any = redis.Redis.from_url(url)

    def add(self, key: str, start: int, length: int, delta: int) -> tuple[int, int]:
        pipe = self._redis.pipeline()
        pipe.incrby(f"ll:rate:{key}:{start}", delta)
        pipe.expire(f"ll:rate:{key}:{start}", 2 * length + 60)
        pipe.get(f"ll:rate:{key}:{start - length}")
        current, _, previous = pipe.execute()
        return max(0, int(current)), int(previous or 0)

    def read(self, key: str, start: int, length: int) -> tuple[int, int]:
        current, previous = self._redis.mget(
            f"ll:rate:{key}:{start}", f"ll:rate:{key}:{start - length}"
        )
        return int(current or 0), int(previous or 0)
