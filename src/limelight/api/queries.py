"""The Queries API: saved queries of the admin key's environment (api-spec 2.4, 4.4 to 4.8)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.alerts.service import check_query_change
from limelight.api.body import read_body
from limelight.api.deps import admin_key, runtime_of
from limelight.api.problems import json_response
from limelight.auth.api_keys import KeyContext
from limelight.errors import BadRequest
from limelight.query.spec import fields_to_json, validate_fields
from limelight.runtime import Runtime
from limelight.store.meta import queries_repo as repo
from limelight.store.meta.queries_models import SavedQuery

router = APIRouter()
AdminKey = Annotated[KeyContext, Depends(admin_key)]

# Set by the service; ignored when a client sends them.
SERVICE_FIELDS = ("id", "created_at", "updated_at", "author")
# The author of a query saved without one, by a key that had no owner (migration 0004).
UNKNOWN_AUTHOR = "unknown"


def iso_utc(moment: datetime) -> str:
    """ISO 8601 in UTC with milliseconds, e.g. 2026-11-21T10:00:00.000Z."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def query_document(query: SavedQuery) -> dict[str, Any]:
    """The full query: its set fields plus what the service sets."""
    return {
        **query.fields,
        "id": query.id,
        "created_at": iso_utc(query.created_at),
        "updated_at": iso_utc(query.updated_at),
        "author": query.author or UNKNOWN_AUTHOR,
    }


async def json_object(request: Request, rt: Runtime) -> dict[str, Any]:
    """The body as a JSON object without the service-set fields; an empty body is ``{}``."""
    body = await read_body(request, rt.settings.max_request_bytes)
    if not body.strip():
        return {}
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise BadRequest(message="Invalid query", reason="the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise BadRequest(
            message="Invalid query",
            errors=[{"field": "query", "message": "must be a JSON object"}],
        )
    return {k: v for k, v in data.items() if k not in SERVICE_FIELDS}


@router.post("/v1/queries")
@router.post("/v1/queries/", include_in_schema=False)
async def create_query(request: Request, key: AdminKey) -> Response:
    rt = runtime_of(request)
    fields = fields_to_json(validate_fields(await json_object(request, rt)))

    def create() -> str:
        with rt.meta.session(immediate=True) as s:
            return repo.create_query(s, key.tenant, fields, key.author).id

    return json_response({"query": {"id": await run_in_threadpool(create)}})


@router.get("/v1/queries")
@router.get("/v1/queries/", include_in_schema=False)
async def list_queries(request: Request, key: AdminKey) -> Response:
    rt = runtime_of(request)

    def load() -> list[dict[str, Any]]:
        with rt.meta.session() as s:
            return [query_document(q) for q in repo.list_queries(s, key.tenant)]

    return json_response({"queries": await run_in_threadpool(load)})


@router.get("/v1/queries/{query_id}")
async def get_query(request: Request, key: AdminKey, query_id: str) -> Response:
    rt = runtime_of(request)

    def load() -> dict[str, Any]:
        with rt.meta.session() as s:
            return query_document(repo.get_query(s, key.tenant, query_id))

    return json_response({"query": await run_in_threadpool(load)})


@router.put("/v1/queries/{query_id}")
async def update_query(request: Request, key: AdminKey, query_id: str) -> Response:
    """Partial update: the fields sent replace the stored ones, the rest stay."""
    rt = runtime_of(request)
    patch = await json_object(request, rt)

    def update() -> dict[str, Any]:
        # One write transaction, so two concurrent updates cannot lose each other's fields.
        with rt.meta.session(immediate=True) as s:
            query = repo.get_query(s, key.tenant, query_id)
            fields = validate_fields({**query.fields, **patch})
            check_query_change(s, key.tenant, query_id, fields)  # what its alerts watch stays
            merged = fields_to_json(fields)
            return query_document(repo.replace_query_fields(s, key.tenant, query_id, merged))

    return json_response({"query": await run_in_threadpool(update)})


@router.delete("/v1/queries/{query_id}")
async def delete_query(request: Request, key: AdminKey, query_id: str) -> Response:
    rt = runtime_of(request)

    def delete() -> None:
        with rt.meta.session(immediate=True) as s:
            repo.delete_query(s, key.tenant, query_id)

    await run_in_threadpool(delete)
    return json_response({"query": {"id": query_id}})
