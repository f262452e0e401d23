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

import time
from collections.abc import Callable
from dataclasses import dataclass

from limelight.errors import RateLimited
from limelight.ratelimit import RateLimiter, WindowCounts
from limelight.settings import Settings


@dataclass(frozen=True)
class Attempt:
    """One authentication attempt, counted as failed until ``succeeded``."""

    ip: str
    account: str
    windows: tuple[int, int]  # where it was counted, per address and per account


class FailedAuthThrottle:
    def __init__(
        self,
        settings: Settings,
        clock: Callable[[], float] = time.time,
        counts: WindowCounts | None = None,
    ) -> None:
        window = settings.auth_failure_window
        per_ip, per_account = settings.auth_failures_per_ip, settings.auth_failures_per_account
        self._by_ip = RateLimiter(per_ip, window, clock, counts, "auth-ip")
        self._by_account = RateLimiter(per_account, window, clock, counts, "auth-account")

    def _pairs(self, ip: str, account: str) -> list[tuple[RateLimiter, str]]:
        return [(self._by_ip, ip), (self._by_account, account)]

    def attempt(self, ip: str, account: str) -> Attempt:
        """Count an attempt, or raise ``RateLimited`` (with the seconds to wait) when
        either limit is reached; call this before checking the credentials."""
        # Each hit is counted before it is checked (see ``RateLimiter``), so concurrent
        # attempts, in this process or others, never pass a limit together.
        by_ip = self._by_ip.hit(ip)
        try:
            by_account = self._by_account.hit(account)
        except RateLimited:
            self._by_ip.give_back(ip, by_ip)
            raise
        return Attempt(ip, account, (by_ip, by_account))

    def succeeded(self, attempt: Attempt) -> None:
        """The credentials were right: the attempt no longer counts."""
        for (limiter, key), window in zip(
            self._pairs(attempt.ip, attempt.account), attempt.windows, strict=True
        ):
            limiter.give_back(key, window)
