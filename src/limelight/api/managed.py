"""``GET /v1/managed``: the resources ``limelight apply`` created, by managed id; and the
JSON Schema of a folder of resources at a stable address, for editors and CI."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight import managed
from limelight.api.deps import admin_key
from limelight.api.openapi import KEYED, admin_only, ok
from limelight.api.queries import QUERY_ID
from limelight.auth.api_keys import KeyContext
from limelight.schemas import RESOURCES_SCHEMA_PATH, resources_schema
from limelight.web.problems import json_response
from limelight.web.request import runtime_of

router = APIRouter(tags=["resources as code"])


@router.get(
    "/v1/managed",
    summary="The resources `limelight apply` created, by managed id",
    description="Each query, alert and board created with `managed_id` (the id its folder "
    "gives it), while it exists: `limelight plan` matches a folder's resources by it, "
    "and `--prune` deletes only these.",
    openapi_extra=admin_only(),
    responses={
        **ok(
            "By type, then managed id.",
            {"managed": [{"type": "query", "managed_id": "slow-checkouts", "id": QUERY_ID}]},
        ),
        **KEYED,
    },
)
async def list_managed(
    request: Request, key: Annotated[KeyContext, Depends(admin_key)]
) -> Response:
    rt = runtime_of(request)
    found = await run_in_threadpool(managed.all_managed, rt.meta, key.tenant)
    return json_response({"managed": found})


@router.get(
    RESOURCES_SCHEMA_PATH,
    summary="The JSON Schema of a file of resources",
    description="What `limelight plan` and `apply` read; editors complete a file that "
    "names it. Needs no key.",
    responses={"200": {"description": "The schema.", "content": {"application/schema+json": {}}}},
)
async def schema_of_resources() -> Response:
    """Public, like any schema an editor fetches: it holds no tenant's data."""
    return Response(
        resources_schema(),
        media_type="application/schema+json",
        headers={"Cache-Control": "public, max-age=3600"},
    )
