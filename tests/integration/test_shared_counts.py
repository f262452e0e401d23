"""Rate limits counted in one place for every process: the metadata database (SQLite,
PostgreSQL) or Redis, beside this process's memory."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from limelight.errors import RateLimited
from limelight.ratelimit import MemoryCounts, RateLimiter, RedisCounts, WindowCounts
from limelight.store.meta.db import MetaDB
from limelight.store.meta.rate_counts import SqlCounts
from tests.support import unavailable

REDIS_URL = "redis://127.0.0.1:6379/0"


def _redis() -> WindowCounts:
    counts = RedisCounts(REDIS_URL)
    try:
        counts.read("probe", 0, 60)
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
        # Only "no Redis here" skips: any other error is the counts' own, and fails.
        unavailable(f"Redis is not reachable on 127.0.0.1:6379: {exc}")
    return counts


@pytest.fixture(params=["memory", "database", "redis"])
def counts(request: pytest.FixtureRequest, db: MetaDB) -> Iterator[WindowCounts]:
    if request.param == "memory":
        yield MemoryCounts()
    elif request.param == "database":
        yield SqlCounts(db)
    else:
        yield _redis()


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_a_limit_holds_across_limiters_sharing_the_counts(counts: WindowCounts) -> None:
    clock = Clock(1_800_000_000.0)  # the start of a window
    name = f"t{uuid.uuid4().hex[:8]}"
    one, two = (RateLimiter(5, 60, clock, counts, name) for _ in range(2))
    windows = [(one if i % 2 else two).hit("ws") for i in range(5)]
    with pytest.raises(RateLimited) as refused:
        one.hit("ws")
    assert refused.value.retry_after == 60
    assert one.blocked("ws") and two.blocked("ws")
    two.give_back("ws", windows[0])  # a success handed back makes room for one more
    one.hit("ws")
    with pytest.raises(RateLimited):
        two.hit("ws")
    assert RateLimiter(5, 60, clock, counts, name).hit("another") == windows[0]


def test_the_window_slides(counts: WindowCounts) -> None:
    clock = Clock(1_800_000_000.0)
    limiter = RateLimiter(4, 60, clock, counts, f"t{uuid.uuid4().hex[:8]}")
    for _ in range(4):
        limiter.hit("k")
    clock.now += 60 + 30  # half way into the next window: the 4 count as 2
    limiter.hit("k")
    limiter.hit("k")
    with pytest.raises(RateLimited):
        limiter.hit("k")
    clock.now += 60  # two windows on: nothing from the first counts
    for _ in range(2):
        limiter.hit("k")


def test_concurrent_hits_never_pass_the_limit_together(counts: WindowCounts) -> None:
    clock = Clock(1_800_000_000.0)
    limiter = RateLimiter(7, 60, clock, counts, f"t{uuid.uuid4().hex[:8]}")
    start = threading.Barrier(24)

    def hit(_: int) -> bool:
        start.wait()
        try:
            limiter.hit("k")
        except RateLimited:
            return False
        return True

    with ThreadPoolExecutor(24) as pool:
        passed = sum(pool.map(hit, range(24)))
    assert passed == 7
