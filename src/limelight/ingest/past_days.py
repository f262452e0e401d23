"""How many days of past events an environment may write a minute.

Every day an INSERT touches is a part of its own in the events table (a partition per
day, which merges never join with another day's), tens of files and about 45 ms of the
engine. A request may fall on at most 100 days (``service.MAX_DAYS_PER_REQUEST``), but
one ingest key sending 40 such requests in a second made 4,000 parts: 1.4 GB on disk
for 6,000 events, and the inserts behind them held every other tenant's small batches
past the buffer's bound, so those were refused ("the store is behind") for a minute.

So the days other than the last few (today, yesterday and tomorrow, UTC: live traffic,
late arrivals and clocks a little ahead) are counted per environment, at most
``PAST_DAYS_PER_MINUTE`` a minute; past that a request is refused whole with 429 and
Retry-After, which every shipper and ``limelight send`` wait for and retry. A backfill
of a year then takes about four minutes. The counts are the deployment's shared ones
(``runtime.shared_counts``), so several API processes share one budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from limelight.errors import RateLimited
from limelight.ratelimit import RateLimiter, WindowCounts
from limelight.tenant import Tenant
from limelight.times import DAY_MS

PAST_DAYS_PER_MINUTE = 100
# Days this close to today (UTC) are free.
RECENT_DAYS = 1


class PastDays:
    """The budget of past days per environment (``admit``)."""

    def __init__(
        self,
        counts: WindowCounts,
        clock: Callable[[], float] = time.time,
        per_minute: int = PAST_DAYS_PER_MINUTE,
    ) -> None:
        self._clock = clock
        self._limiter = RateLimiter(per_minute, 60, clock, counts, "past-days")

    @contextmanager
    def admit(self, tenant: Tenant, days: Iterable[int]) -> Iterator[None]:
        """Count the request's past days (UTC day numbers) against the environment's
        budget while the request is stored (a ``with`` block), or raise ``RateLimited``
        with nothing counted when it is spent. A request whose storing fails (503: the
        store is behind) is uncounted: it wrote no part, and its retries would otherwise
        have found the budget spent for a minute."""
        today = int(self._clock() * 1000) // DAY_MS
        past = sum(1 for day in days if abs(day - today) > RECENT_DAYS)
        if not past:
            yield
            return
        key = f"{tenant.workspace_id}/{tenant.environment_id}"
        try:
            window = self._limiter.hit(key, past)
        except RateLimited as exc:
            raise RateLimited(
                exc.retry_after,
                f"this environment may write events on at most {self._limiter.limit} past"
                " days a minute (each day is a part of its own on disk); this request's"
                f" fall on {past}: retry after {exc.retry_after}s",
            ) from None
        try:
            yield
        except BaseException:
            self._limiter.give_back(key, window, past)
            raise
