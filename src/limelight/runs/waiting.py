"""Waiting for a run to settle, on the event loop: the API's ``?wait=`` and the console.

The answer comes the moment the run settles (the run service calls back from
its worker), so a waiting client pays one round trip rather than a polling
interval; only a run of another process (known by its record) is looked up again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TypeVar

from limelight.errors import Unavailable
from limelight.runs.model import RunStatus, RunView
from limelight.runs.service import QueryRunService
from limelight.tenant import Tenant

T = TypeVar("T")
# Past its queue and run limits a read has failed on the worker; this bounds the wait
# for one whose job was dropped (the server stopping).
READ_SLACK_SECONDS = 5.0


async def current(runs: QueryRunService, tenant: Tenant, run_id: str) -> RunView:
    """The run as it stands; 404 for an unknown id or another tenant's run."""
    # A live run is answered from memory here; only the database is read off the loop.
    view = runs.peek(tenant, run_id)
    return view if view is not None else await asyncio.to_thread(runs.get, tenant, run_id)


POLL_FIRST_SECONDS = 0.05
POLL_MOST_SECONDS = 0.4


async def settled(runs: QueryRunService, tenant: Tenant, view: RunView, wait: float) -> RunView:
    """``view`` once its run has settled, or as it stands after ``wait`` seconds.

    A run of this process wakes its waiters the moment it settles; a run created
    by another API process is read from its record again, first after 50 ms,
    then less often (up to every 0.4 s).
    """
    run_id = view.info.id
    loop = asyncio.get_running_loop()
    until = loop.time() + wait
    poll = POLL_FIRST_SECONDS
    while view.status is RunStatus.STARTED and (left_to_wait := until - loop.time()) > 0:
        done = asyncio.Event()

        def wake(event: asyncio.Event = done) -> None:  # called on a worker thread
            loop.call_soon_threadsafe(event.set)

        left = runs.watch(tenant, run_id, wake)
        if left > 0:
            # A little past the run's deadline, so a timed-out run is answered as FAILED;
            # a queued run's deadline moves when it starts, so look again after it.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), timeout=min(left_to_wait, left + 0.05))
        else:  # settled meanwhile, or a run of another process: read it again
            view = await current(runs, tenant, run_id)
            if view.status is not RunStatus.STARTED:
                break
            await asyncio.sleep(min(left_to_wait, poll))
            poll = min(poll * 2, POLL_MOST_SECONDS)
        view = await current(runs, tenant, run_id)
    return view


async def read_answer(runs: QueryRunService, tenant: Tenant, job: Callable[[float], T]) -> T:
    """``job``'s answer (a read that answers at once: trace search, the service overview),
    run on the query run workers in the workspace's turn (``QueryRunService.read``); the
    API and the console wait on it alike."""
    future = await asyncio.to_thread(runs.read, tenant, job)
    limits = runs.limits
    try:
        return await asyncio.wait_for(
            asyncio.wrap_future(future),
            limits.max_queue_seconds + limits.max_run_seconds + READ_SLACK_SECONDS,
        )
    except TimeoutError:
        raise Unavailable("the read did not finish; try again shortly") from None
