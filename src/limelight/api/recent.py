"""``GET /v1/events``: the newest events of the admin key's environment.

The plain "tail" view (the console's live list, and tests that read back what
they sent); everything richer goes through query runs.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.api.deps import admin_key
from limelight.api.openapi import KEYED, admin_only, ok
from limelight.api.query_runs import MAX_UNIX_MS
from limelight.auth.api_keys import KeyContext
from limelight.ingest.service import check_dataset
from limelight.runs.recent import newest_events
from limelight.web.problems import json_response
from limelight.web.request import runtime_of

router = APIRouter(tags=["events"])


@router.get(
    "/v1/events",
    summary="The newest events",
    openapi_extra=admin_only(),
    responses={
        **ok("Newest first.", {"events": [{"message": "checkout paid"}], "count": 1}),
        **KEYED,
    },
)
async def recent_events(
    request: Request,
    key: Annotated[KeyContext, Depends(admin_key)],
    dataset: str | None = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 100,
    from_: Annotated[int | None, Query(alias="from", ge=0, le=MAX_UNIX_MS)] = None,
    to: Annotated[int | None, Query(ge=0, le=MAX_UNIX_MS, description="unix ms")] = None,
) -> Response:
    """The newest events, over all time or from ``from`` (inclusive) to ``to`` (exclusive)."""
    if dataset is not None:
        check_dataset(dataset)
    rt = runtime_of(request)
    events = await run_in_threadpool(
        newest_events, rt.events, key.tenant, dataset, limit, rt.runs.limits, from_, to
    )
    return json_response({"events": events, "count": len(events)})
