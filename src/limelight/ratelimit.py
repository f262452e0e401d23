"""In-process rate limiting: a sliding-window counter per key.

Written here rather than taken from a library because what we need is tiny
(one process holds the embedded engine anyway) and the libraries in this space
(limits, slowapi) want a storage backend and their own decorators. A
multi-worker deployment would put the same interface in front of Redis.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from limelight.errors import RateLimited


class RateLimiter:
    """At most ``limit`` hits per ``window`` seconds for each key.

    The count is a sliding window estimated from the current and the previous
    fixed window (the approach of Cloudflare and many others): O(1) memory per key.
    """

    def __init__(
        self, limit: int, window: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._lock = threading.Lock()
        # key -> (window index, hits in it, hits in the window before)
        self._counts: dict[str, tuple[int, int, int]] = {}

    def _estimate(self, key: str, now: float) -> tuple[int, float, int, int]:
        index = int(now // self.window)
        slot, current, previous = self._counts.get(key, (index, 0, 0))
        if slot != index:
            previous = current if slot == index - 1 else 0
            current = 0
        elapsed = (now % self.window) / self.window
        return index, current + previous * (1 - elapsed), current, previous

    def _wait(self, now: float) -> int:
        return max(1, math.ceil(self.window - now % self.window))

    def hit(self, key: str) -> int:
        """Count one hit, or raise ``RateLimited`` (429 with Retry-After) when over the limit.

        Returns the window the hit was counted in, for ``give_back``.
        """
        with self._lock:
            now = self._clock()
            index, estimate, current, previous = self._estimate(key, now)
            if estimate >= self.limit:
                raise RateLimited(
                    self._wait(now), f"rate limit of {self.limit} per {self.window:g}s reached"
                )
            self._counts[key] = (index, current + 1, previous)
            if len(self._counts) > 100_000:
                self._forget(index)
            return index

    def give_back(self, key: str, window: int) -> None:
        """Uncount a hit made in ``window`` (no longer counted once two windows have passed)."""
        with self._lock:
            slot, current, previous = self._counts.get(key, (window, 0, 0))
            if slot == window and current:
                self._counts[key] = (slot, current - 1, previous)
            elif slot == window + 1 and previous:
                self._counts[key] = (slot, current, previous - 1)

    def blocked(self, key: str) -> bool:
        with self._lock:
            _, estimate, _, _ = self._estimate(key, self._clock())
        return estimate >= self.limit

    def _forget(self, index: int) -> None:
        stale = [k for k, (slot, _, _) in self._counts.items() if slot < index - 1]
        for k in stale:
            del self._counts[k]
