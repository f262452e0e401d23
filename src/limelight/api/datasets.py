"""The Datasets API: the datasets of the admin key's environment and their keys.

Same keys and error rules as the Queries API: 401 without a key, 403 for an
ingest key, 400 naming the field for a bad timeframe.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.api.deps import admin_key
from limelight.api.openapi import FOUND, KEYED, admin_only, body, ok
from limelight.auth.api_keys import KeyContext
from limelight.datasets import dataset_keys, list_datasets, timeframe, with_retention
from limelight.errors import BadRequest
from limelight.retention import set_dataset_retention
from limelight.runs.limits import check_epoch
from limelight.web.body import read_json
from limelight.web.problems import json_response
from limelight.web.request import runtime_of

router = APIRouter(tags=["datasets"])
AdminKey = Annotated[KeyContext, Depends(admin_key)]
UnixMs = Annotated[int | None, Query(ge=0, le=2**53, description="unix ms")]


@router.get(
    "/v1/datasets",
    summary="The datasets with events in the timeframe",
    description="Unix ms; `to` defaults to now and `from` to 24 hours before it.",
    openapi_extra=admin_only(),
    responses={
        **ok(
            "By name.",
            {
                "datasets": [
                    {
                        "name": "logs",
                        "count": 52311,
                        "last_event_at": 1763786399120,
                        "retention": "30d",
                        "retention_is_default": True,
                    }
                ]
            },
        ),
        **KEYED,
    },
)
async def datasets(
    request: Request,
    key: AdminKey,
    from_: Annotated[int | None, Query(alias="from", ge=0, le=2**53)] = None,
    to: UnixMs = None,
) -> Response:
    """Each dataset with events in the timeframe (default: the last 24 hours)."""
    rt = runtime_of(request)
    if from_ is None:  # 'to' alone: named before 'from' defaults to a day before it
        check_epoch(None, to)
    frame = timeframe(from_, to)
    found = await run_in_threadpool(list_datasets, rt.events, key.tenant, rt.runs.limits, frame)
    found = await run_in_threadpool(with_retention, rt.meta, rt.settings, key.tenant, found)
    return json_response({"datasets": found})


@router.get(
    "/v1/datasets/{name}/keys",
    summary="The keys a dataset's events hold, with their kinds",
    openapi_extra=admin_only(),
    responses={
        **ok(
            "System fields first, then dotted paths by name.",
            {
                "keys": [
                    {"key": "_timestamp", "types": ["number"]},
                    {"key": "http.status", "types": ["string", "number"]},
                ]
            },
        ),
        **FOUND,
    },
)
async def keys(request: Request, key: AdminKey, name: str) -> Response:
    """The keys the dataset's events hold, with their kinds; system fields included."""
    rt = runtime_of(request)
    found = await run_in_threadpool(dataset_keys, rt.events, key.tenant, name, rt.runs.limits)
    return json_response({"keys": found})


RETENTION_BODY = {
    "type": "object",
    "required": ["retention"],
    "properties": {"retention": {"type": ["string", "null"]}},
}


@router.put(
    "/v1/datasets/{name}/retention",
    summary="How long the dataset keeps its events",
    description='A duration from `1h` to `3650d`, or `"default"` (or null) for the '
    "deployment's `LIMELIGHT_RETENTION_DAYS`.",
    openapi_extra=admin_only(body(RETENTION_BODY, {"retention": "7d"})),
    responses={
        **ok(
            "What now holds.",
            {"dataset": {"name": "debug", "retention": "7d", "retention_is_default": False}},
        ),
        **KEYED,
    },
)
async def retention(request: Request, key: AdminKey, name: str) -> Response:
    """Keep the dataset's events for ``{"retention": "7d"}``, or for the deployment's
    default again with ``{"retention": "default"}`` (or null)."""
    rt = runtime_of(request)
    body = await read_json(request, "retention")
    if not isinstance(body, dict) or "retention" not in body:
        raise BadRequest(
            message="Invalid retention", errors=[{"field": "retention", "message": "required"}]
        )
    found = await run_in_threadpool(
        set_dataset_retention, rt.meta, rt.settings, key.tenant, name, body["retention"]
    )
    return json_response({"dataset": found})
