"""Brute-force protection: failed logins and client authentications are counted per
address and per account (email or Client ID); over either limit, 429 with Retry-After.

Only failures count, so a client that authenticates correctly is never slowed
down by its own traffic. The flip side, common to every per-account limit: a
stranger who spams wrong secrets for a Client ID locks that client out for the
window; the per-address limit catches such a stranger too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress

from limelight.errors import RateLimited
from limelight.ratelimit import RateLimiter
from limelight.settings import Settings


class FailedAuthThrottle:
    def __init__(self, settings: Settings, clock: Callable[[], float] = time.monotonic) -> None:
        window = settings.auth_failure_window
        self._by_ip = RateLimiter(settings.auth_failures_per_ip, window, clock)
        self._by_account = RateLimiter(settings.auth_failures_per_account, window, clock)

    def _pairs(self, ip: str, account: str) -> list[tuple[RateLimiter, str]]:
        return [(self._by_ip, ip), (self._by_account, account)]

    def check(self, ip: str, account: str) -> None:
        """Raise ``RateLimited`` (with the seconds to wait) when either limit is reached."""
        for limiter, key in self._pairs(ip, account):
            if limiter.blocked(key):
                limiter.hit(key)  # over the limit, so this raises with Retry-After

    def failed(self, ip: str, account: str) -> None:
        for limiter, key in self._pairs(ip, account):
            with suppress(RateLimited):  # already over: the next check refuses
                limiter.hit(key)
