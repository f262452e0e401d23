"""Brute-force protection: failed logins and client authentications are counted per
address and per account (email or Client ID); over either limit, 429 with Retry-After.

An attempt is counted before its credentials are checked and given back when
they turn out right: counted after the check, concurrent guesses all passed the
limit while the first ones were still hashing (60 at once got 49 password
checks with a limit of 10). So only failures stay counted, and a client that
authenticates correctly is never slowed down by its own traffic. The flip side,
common to every per-account limit: a stranger who spams wrong secrets for a
Client ID locks that client out for the window; the per-address limit catches
such a stranger too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from limelight.ratelimit import RateLimiter
from limelight.settings import Settings


@dataclass(frozen=True)
class Attempt:
    """One authentication attempt, counted as failed until ``succeeded``."""

    ip: str
    account: str
    windows: tuple[int, int]  # where it was counted, per address and per account


class FailedAuthThrottle:
    def __init__(self, settings: Settings, clock: Callable[[], float] = time.monotonic) -> None:
        window = settings.auth_failure_window
        self._by_ip = RateLimiter(settings.auth_failures_per_ip, window, clock)
        self._by_account = RateLimiter(settings.auth_failures_per_account, window, clock)
        # Both limits are checked and counted as one step, so that no concurrent
        # attempt slips in between the check of one and the count of the other.
        self._lock = threading.Lock()

    def _pairs(self, ip: str, account: str) -> list[tuple[RateLimiter, str]]:
        return [(self._by_ip, ip), (self._by_account, account)]

    def attempt(self, ip: str, account: str) -> Attempt:
        """Count an attempt, or raise ``RateLimited`` (with the seconds to wait) when
        either limit is reached; call this before checking the credentials."""
        pairs = self._pairs(ip, account)
        with self._lock:
            for limiter, key in pairs:
                if limiter.blocked(key):
                    limiter.hit(key)  # over the limit, so this raises with Retry-After
            by_ip, by_account = (limiter.hit(key) for limiter, key in pairs)
        return Attempt(ip, account, (by_ip, by_account))

    def succeeded(self, attempt: Attempt) -> None:
        """The credentials were right: the attempt no longer counts."""
        for (limiter, key), window in zip(
            self._pairs(attempt.ip, attempt.account), attempt.windows, strict=True
        ):
            limiter.give_back(key, window)
