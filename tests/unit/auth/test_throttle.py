"""Failed-authentication limits: attempts are counted before the check, successes given back."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from limelight.auth.throttle import FailedAuthThrottle
from limelight.errors import RateLimited
from limelight.settings import Settings


def throttle(per_ip: int = 100, per_account: int = 10) -> FailedAuthThrottle:
    settings = Settings(auth_failures_per_ip=per_ip, auth_failures_per_account=per_account)
    # A clock at the start of a window: no window boundary falls within a test.
    window = settings.auth_failure_window
    return FailedAuthThrottle(settings, clock=lambda: 1_800_000_000 // window * window + 1.0)


def test_concurrent_slow_checks_never_exceed_the_limit() -> None:
    limits = throttle(per_account=10)
    checks = 0
    lock = threading.Lock()
    start = threading.Barrier(60)

    def guess(n: int) -> None:
        nonlocal checks
        start.wait()
        try:
            limits.attempt(f"10.0.0.{n}", "login:victim@example.com")
        except RateLimited:
            return
        time.sleep(0.05)  # the password hash
        with lock:
            checks += 1

    with ThreadPoolExecutor(60) as pool:
        list(pool.map(guess, range(60)))
    assert checks == 10


def test_successful_attempts_are_given_back() -> None:
    limits = throttle(per_ip=3, per_account=3)
    for _ in range(50):
        limits.succeeded(limits.attempt("10.0.0.1", "client:a"))
    for _ in range(3):
        limits.attempt("10.0.0.1", "client:a")  # three failures
    with pytest.raises(RateLimited):
        limits.attempt("10.0.0.1", "client:a")
    with pytest.raises(RateLimited):
        limits.attempt("10.0.0.1", "client:b")  # the address is over its limit too
