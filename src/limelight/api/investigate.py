"""Investigating events: a key's top values, and BubbleUp.

``GET /v1/datasets/<name>/keys/<key>/values`` answers the most frequent values
of a key among the timeframe's events (and the filters); ``POST /v1/bubble_up``
what sets a selection of a query's events apart from the rest. Both answer at
once, computed on a query-run worker in the workspace's turn within a run's
limits. Same keys and error rules as the Queries API: 401 without a key, 403
for an ingest key, 400 naming the field.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from starlette.requests import Request
from starlette.responses import Response

from limelight.api.deps import admin_key
from limelight.auth.api_keys import KeyContext
from limelight.datasets import timeframe
from limelight.errors import BadRequest
from limelight.query.bubble_up_spec import validate_bubble_up
from limelight.query.field_values import DEFAULT_LIMIT, MAX_LIMIT
from limelight.query.keys import valid_key
from limelight.query.spec import Filter, validate_fields
from limelight.runs.investigate import bubble_up, field_values
from limelight.runs.waiting import read_answer
from limelight.web.body import read_body
from limelight.web.problems import json_response
from limelight.web.request import runtime_of

router = APIRouter(tags=["investigate"])
AdminKey = Annotated[KeyContext, Depends(admin_key)]
UnixMs = Annotated[int | None, Query(ge=0, le=2**53, description="unix ms")]


def parse_filters(text: str | None) -> list[Filter]:
    """The ``filters`` query parameter: a JSON array of ``{key, operation, value}``."""
    if text is None or not text.strip():
        return []
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        raise BadRequest(
            message="Invalid filters",
            errors=[{"field": "filters", "message": "must be a JSON array of filters"}],
        ) from None
    if not isinstance(parsed, list):
        raise BadRequest(
            message="Invalid filters",
            errors=[{"field": "filters", "message": "must be a JSON array of filters"}],
        )
    return validate_fields({"filters": parsed}).filters or []


@router.get("/v1/datasets/{name}/keys/{key:path}/values")
async def key_values(
    request: Request,
    auth: AdminKey,
    name: str,
    key: str,
    from_: Annotated[int | None, Query(alias="from", ge=0, le=2**53)] = None,
    to: UnixMs = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    filters: str | None = None,
) -> Response:
    """The most frequent values of a key (default: over the last 24 hours)."""
    if problem := valid_key(key):
        raise BadRequest(message="Invalid key", errors=[{"field": "key", "message": problem}])
    parsed = parse_filters(filters)
    rt = runtime_of(request)
    frame = timeframe(from_, to)

    def work(deadline: float) -> dict[str, Any]:
        return field_values(
            rt.events,
            auth.tenant,
            name,
            key,
            parsed,
            frame,
            limit,
            rt.runs.limits,
            deadline,
        )

    return json_response(await read_answer(rt.runs, auth.tenant, work))


@router.post("/v1/bubble_up")
async def bubble_up_route(request: Request, auth: AdminKey) -> Response:
    """What sets a selection of a query's events apart from the rest of them."""
    rt = runtime_of(request)
    asked = validate_bubble_up(await read_body(request, rt.settings.max_request_bytes))

    def work(deadline: float) -> dict[str, Any]:
        return bubble_up(rt.events, auth.tenant, asked, rt.runs.limits, deadline)

    return json_response(await read_answer(rt.runs, auth.tenant, work))
