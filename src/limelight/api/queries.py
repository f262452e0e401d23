"""The Queries API: saved queries of the admin key's environment (api-spec 2.4, 4.4 to 4.8)."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Query
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight import saved_queries
from limelight.api.deps import admin_key
from limelight.api.openapi import FOUND, KEYED, MANAGED_ID_TAKEN, admin_only, body, ok
from limelight.auth.api_keys import KeyContext
from limelight.errors import BadRequest
from limelight.runtime import Runtime
from limelight.web.body import read_body
from limelight.web.problems import json_response
from limelight.web.request import runtime_of

router = APIRouter(tags=["queries"])
AdminKey = Annotated[KeyContext, Depends(admin_key)]
ManagedId = Annotated[
    str | None,
    Query(description="The id a folder of resources gives it (`limelight apply`); recorded "
          "with it and listed by `GET /v1/managed`."),
]  # fmt: skip


async def json_object(request: Request, rt: Runtime, what: str = "query") -> dict[str, Any]:
    """The body as a JSON object (a ``what``: a query, a board); an empty body is ``{}``."""
    body = await read_body(request, rt.settings.max_request_bytes)
    if not body.strip():
        return {}
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise BadRequest(message=f"Invalid {what}", reason="the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise BadRequest(
            message=f"Invalid {what}",
            errors=[{"field": what, "message": "must be a JSON object"}],
        )
    return data


QUERY_ID = "1m7z5f0k2x9c3a1b2c3"
QUERY = {
    "name": "slow checkouts",
    "namespaces": [{"type": "service", "value": "checkout"}],
    "calculations": [{"operator": "P99", "key": "duration"}, {"operator": "COUNT"}],
    "filters": [{"key": "duration", "operation": ">", "value": 100}],
    "group_bys": [{"key": "data.userId", "type": "string"}],
    "orders": [{"key": "P99(duration)", "type": "number", "order": "DESCENDING"}],
}
SAVED_QUERY = {
    **QUERY,
    "id": QUERY_ID,
    "created_at": "2026-11-21T10:00:00.000Z",
    "updated_at": "2026-11-21T10:00:00.000Z",
    "author": "1m7y0a9b8c7d6e5f4g3",
}


@router.post(
    "/v1/queries",
    summary="Save a query",
    openapi_extra=admin_only(body("QueryFields", QUERY)),
    responses={**ok("Saved.", {"query": {"id": QUERY_ID}}), **KEYED, "409": MANAGED_ID_TAKEN},
)
@router.post("/v1/queries/", include_in_schema=False)
async def create_query(request: Request, key: AdminKey, managed_id: ManagedId = None) -> Response:
    rt = runtime_of(request)
    data = await json_object(request, rt)
    created = await run_in_threadpool(
        saved_queries.create, rt.meta, key.tenant, data, key.author, managed_id
    )
    return json_response({"query": {"id": created}})


@router.get(
    "/v1/queries",
    summary="Every saved query of the environment",
    openapi_extra=admin_only(),
    responses={**ok("The queries.", {"queries": [SAVED_QUERY]}), **KEYED},
)
@router.get("/v1/queries/", include_in_schema=False)
async def list_queries(request: Request, key: AdminKey) -> Response:
    rt = runtime_of(request)
    found = await run_in_threadpool(saved_queries.all_queries, rt.meta, key.tenant)
    return json_response({"queries": found})


@router.get(
    "/v1/queries/{query_id}",
    summary="A saved query",
    openapi_extra=admin_only(),
    responses={**ok("The query.", {"query": SAVED_QUERY}), **FOUND},
)
async def get_query(request: Request, key: AdminKey, query_id: str) -> Response:
    rt = runtime_of(request)
    found = await run_in_threadpool(saved_queries.get, rt.meta, key.tenant, query_id)
    return json_response({"query": found})


@router.put(
    "/v1/queries/{query_id}",
    summary="Change a saved query (the fields sent)",
    openapi_extra=admin_only(body("QueryFields", {"name": "p99 of checkouts"})),
    responses={**ok("The query as it now is.", {"query": SAVED_QUERY}), **FOUND},
)
async def update_query(request: Request, key: AdminKey, query_id: str) -> Response:
    """Partial update: the fields sent replace the stored ones, the rest stay."""
    rt = runtime_of(request)
    patch = await json_object(request, rt)
    changed = await run_in_threadpool(saved_queries.update, rt.meta, key.tenant, query_id, patch)
    return json_response({"query": changed})


@router.delete(
    "/v1/queries/{query_id}",
    summary="Delete a saved query",
    description="403 naming the alert when an alert uses it, or the boards that show it.",
    openapi_extra=admin_only(),
    responses={**ok("Deleted.", {"query": {"id": QUERY_ID}}), **FOUND},
)
async def delete_query(request: Request, key: AdminKey, query_id: str) -> Response:
    rt = runtime_of(request)
    await run_in_threadpool(saved_queries.delete, rt.meta, key.tenant, query_id)
    return json_response({"query": {"id": query_id}})
