"""An environment's budget of past days a minute, driven by an injected clock."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from limelight.errors import RateLimited, Unavailable
from limelight.ingest.past_days import PastDays
from limelight.ratelimit import MemoryCounts
from limelight.tenant import Tenant
from limelight.times import DAY_MS

A = Tenant("ws_a", "env_a")
B = Tenant("ws_a", "env_b")
# A minute's start, at noon (UTC) of day 20,000.
NOON = (20_000 * DAY_MS + DAY_MS // 2) / 1000
TODAY = 20_000


def admit(budget: PastDays, tenant: Tenant, days: Iterable[int]) -> None:
    with budget.admit(tenant, days):
        pass  # stored


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_yesterday_today_and_tomorrow_are_never_counted() -> None:
    budget = PastDays(MemoryCounts(), Clock(NOON), per_minute=1)
    for _ in range(1000):
        admit(budget, A, {TODAY - 1, TODAY, TODAY + 1})


def test_past_a_minutes_days_an_environment_waits_and_another_does_not() -> None:
    clock = Clock(NOON)
    budget = PastDays(MemoryCounts(), clock, per_minute=100)
    admit(budget, A, {TODAY, *range(TODAY - 102, TODAY - 2)})  # 100 past days and today
    with pytest.raises(RateLimited) as refused:
        admit(budget, A, {TODAY - 500})
    assert refused.value.status == 429 and refused.value.headers["Retry-After"] == "60"
    assert refused.value.reason == (
        "this environment may write events on at most 100 past days a minute (each day is"
        " a part of its own on disk); this request's fall on 1: retry after 60s"
    )
    admit(budget, B, range(TODAY - 300, TODAY - 200))  # its own budget
    admit(budget, A, {TODAY})  # live traffic goes on
    # A refused request counted nothing: a second after the next minute begins, the
    # minute before counts 59/60 of its 100 days, under the limit.
    clock.now = NOON + 61
    admit(budget, A, range(TODAY - 700, TODAY - 600))
    with pytest.raises(RateLimited):
        admit(budget, A, {TODAY - 5})


def test_one_request_may_pass_the_budget_once() -> None:
    """A request of more past days than the budget is taken while the budget is not spent
    (the request cap bounds it), and the next waits until the window has slid past it."""
    clock = Clock(NOON)
    budget = PastDays(MemoryCounts(), clock, per_minute=10)
    admit(budget, A, range(TODAY - 60, TODAY - 10))
    # In the next minute the one before counts less as it goes: 40 s into it, a third of
    # its 50 days (16.7) still count; 50 s into it, a sixth (8.3), under the 10.
    clock.now = NOON + 100
    with pytest.raises(RateLimited):
        admit(budget, A, {TODAY - 5})
    clock.now = NOON + 110
    admit(budget, A, {TODAY - 5})


def test_a_request_whose_storing_fails_is_uncounted() -> None:
    """A 503 (the store is behind) wrote no part: its retries find the budget as it was."""
    budget = PastDays(MemoryCounts(), Clock(NOON), per_minute=10)
    for _ in range(3):
        with pytest.raises(Unavailable), budget.admit(A, range(TODAY - 20, TODAY - 12)):
            raise Unavailable("the store is behind", retry_after=2)
    admit(budget, A, range(TODAY - 20, TODAY - 12))


def test_after_a_heavy_request_the_wait_is_until_the_budget_is_free_again() -> None:
    """8 past days, then 8 more (passing 10 once): the window's end is not enough, the
    sliding count still holds 16 then; 60 s and 22.5 more of the next minute are."""
    clock = Clock(NOON)
    budget = PastDays(MemoryCounts(), clock, per_minute=10)
    admit(budget, A, range(TODAY - 20, TODAY - 12))
    admit(budget, A, range(TODAY - 40, TODAY - 32))
    clock.now = NOON + 20
    with pytest.raises(RateLimited) as refused:
        admit(budget, A, {TODAY - 5})
    assert refused.value.retry_after == 40 + 23
    clock.now = NOON + 20 + 62
    with pytest.raises(RateLimited):
        admit(budget, A, {TODAY - 5})
    clock.now = NOON + 20 + 63
    admit(budget, A, {TODAY - 5})
