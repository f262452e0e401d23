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


@router.get("/v1/datasets")
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


@router.get("/v1/datasets/{name}/keys")
async def keys(request: Request, key: AdminKey, name: str) -> Response:
    """The keys the dataset's events hold, with their kinds; system fields included."""
    rt = runtime_of(request)
    found = await run_in_threadpool(dataset_keys, rt.events, key.tenant, name, rt.runs.limits)
    return json_response({"keys": found})


@router.put("/v1/datasets/{name}/retention")
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
