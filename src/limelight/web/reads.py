"""Reads that answer at once (trace search, services, field values, BubbleUp), for the
API and the console alike: queued on the query run workers in the workspace's turn
(``QueryRunService.read``) and awaited without holding a thread of the server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from starlette.concurrency import run_in_threadpool

from limelight.errors import Unavailable
from limelight.runtime import Runtime
from limelight.tenant import Tenant

T = TypeVar("T")
# Past its queue and run limits a read has failed on the worker; this bounds the wait
# for one whose job was dropped (the server stopping).
SLACK_SECONDS = 5.0


async def read_at_once(rt: Runtime, tenant: Tenant, job: Callable[[float], T]) -> T:
    """``job(deadline)``'s answer, run on the query run workers in the workspace's turn."""
    future = await run_in_threadpool(rt.runs.read, tenant, job)
    limits = rt.runs.limits
    try:
        return await asyncio.wait_for(
            asyncio.wrap_future(future),
            limits.max_queue_seconds + limits.max_run_seconds + SLACK_SECONDS,
        )
    except TimeoutError:
        raise Unavailable("the read did not finish; try again shortly") from None
