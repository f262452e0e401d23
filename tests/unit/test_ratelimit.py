"""The sliding-window rate limiter, driven by an injected clock."""

from __future__ import annotations

import pytest

from limelight.errors import RateLimited
from limelight.ratelimit import RateLimiter


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_up_to_the_limit_passes_then_429_with_retry_after() -> None:
    clock = Clock(1000.0)
    limiter = RateLimiter(3, 10, clock)
    for _ in range(3):
        limiter.hit("k")
    with pytest.raises(RateLimited) as caught:
        limiter.hit("k")
    assert caught.value.status == 429
    # Refused at the start of its 10 s window: the next one starts in 10 s.
    assert caught.value.headers["Retry-After"] == "10"
    assert limiter.blocked("k")
    clock.now = 1003.5  # 6.5 s of the window left: the wait is rounded up, never down
    with pytest.raises(RateLimited) as caught:
        limiter.hit("k")
    assert caught.value.headers["Retry-After"] == "7"


def test_keys_are_counted_apart() -> None:
    limiter = RateLimiter(1, 10, Clock())
    limiter.hit("a")
    limiter.hit("b")
    with pytest.raises(RateLimited):
        limiter.hit("a")


def test_the_window_slides_instead_of_resetting_at_once() -> None:
    clock = Clock(1000.0)  # the start of a 10s window
    limiter = RateLimiter(10, 10, clock)
    for _ in range(10):
        limiter.hit("k")
    # Half-way into the next window, half of the previous hits still count.
    clock.now = 1015.0
    for _ in range(5):
        limiter.hit("k")
    with pytest.raises(RateLimited):
        limiter.hit("k")


def test_after_two_quiet_windows_the_full_limit_is_back() -> None:
    clock = Clock(1000.0)
    limiter = RateLimiter(5, 10, clock)
    for _ in range(5):
        limiter.hit("k")
    clock.now = 1020.0
    for _ in range(5):
        limiter.hit("k")
    assert limiter.blocked("k")


def test_refused_hits_are_not_counted() -> None:
    clock = Clock(1000.0)
    limiter = RateLimiter(2, 10, clock)
    limiter.hit("k")
    limiter.hit("k")
    for _ in range(100):
        with pytest.raises(RateLimited):
            limiter.hit("k")
    clock.now = 1020.0  # two windows later: nothing carries over
    limiter.hit("k")
    limiter.hit("k")


def test_retry_after_counts_down_to_the_next_window() -> None:
    clock = Clock(1003.0)
    limiter = RateLimiter(1, 10, clock)
    limiter.hit("k")
    with pytest.raises(RateLimited) as caught:
        limiter.hit("k")
    assert caught.value.retry_after == 7


def test_a_hit_given_back_no_longer_counts_in_its_window_or_the_next() -> None:
    clock = Clock(1000.0)
    limiter = RateLimiter(2, 10, clock)
    window = limiter.hit("k")
    limiter.hit("k")
    limiter.give_back("k", window)
    limiter.hit("k")
    assert limiter.blocked("k")
    clock.now = 1010.0  # the next window: both hits are its "previous" ones
    limiter.give_back("k", window)
    limiter.give_back("k", window)
    limiter.hit("k")
    limiter.hit("k")
    assert limiter.blocked("k")
