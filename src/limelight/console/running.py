"""Query runs started by console pages: the run service the API uses, waited on here."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool

from limelight.console.timeframe import Window
from limelight.event_json import loads_exact
from limelight.query.spec import QueryFields
from limelight.runs import RunRequest, RunStatus, RunView
from limelight.runs.waiting import settled
from limelight.runtime import Runtime
from limelight.tenant import Tenant

# A page waits this long for its runs; past it the page says the run is still going.
PAGE_WAIT_SECONDS = 15.0


@dataclass(frozen=True)
class Outcome:
    """A run as a page shows it: its data once completed, else why not."""

    run: dict[str, Any]
    data: dict[str, Any] | None

    @property
    def error(self) -> str | None:
        if self.run["status"] == RunStatus.FAILED:
            return str(self.run.get("error") or "the query run failed")
        if self.data is None:
            return "the query run is taking long; reload the page to see it when it is done"
        return None

    @classmethod
    def of(cls, view: RunView) -> Outcome:
        return cls(view.info.to_json(), loads(view.data) if view.data else None)


def loads(payload: bytes) -> Any:
    """A run's JSON, integers beyond 64 bits kept exact (orjson would make them floats)."""
    return loads_exact(payload)[0]


async def start(
    rt: Runtime,
    tenant: Tenant,
    fields: QueryFields,
    window: Window,
    *,
    limit: int | None = None,
    offset: int | None = None,
    granularity: int | None = None,
    query_id: str | None = None,
) -> RunView:
    """A new run (400, 429 or 503 as the API would answer)."""
    request = RunRequest(
        fields=fields,
        from_ms=window.from_ms,
        to_ms=window.to_ms,
        query_id=query_id,
        limit=limit,
        offset=offset,
        granularity=granularity,
    )
    return await run_in_threadpool(rt.runs.create, tenant, request)


async def outcomes(
    rt: Runtime, tenant: Tenant, views: list[RunView], wait: float = PAGE_WAIT_SECONDS
) -> list[Outcome]:
    """The runs once settled (they run at once, side by side), or as they stand after ``wait``."""
    done = await asyncio.gather(*(settled(rt.runs, tenant, v, wait) for v in views))
    return [Outcome.of(v) for v in done]
