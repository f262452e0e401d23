"""The Boards API: boards of the admin key's environment, with the Queries API's
envelopes and rules (401 without a key, 403 for an ingest key, 404 for another
environment's board, 400 with ``errors`` naming each invalid field)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight import boards
from limelight.api.deps import admin_key
from limelight.api.queries import ManagedId, json_object
from limelight.auth.api_keys import KeyContext
from limelight.web.problems import json_response
from limelight.web.request import runtime_of

router = APIRouter()
AdminKey = Annotated[KeyContext, Depends(admin_key)]


@router.post("/v1/boards")
@router.post("/v1/boards/", include_in_schema=False)
async def create_board(request: Request, key: AdminKey, managed_id: ManagedId = None) -> Response:
    rt = runtime_of(request)
    data = await json_object(request, rt, "board")
    created = await run_in_threadpool(
        boards.create, rt.meta, key.tenant, data, key.author, managed_id
    )
    return json_response({"board": {"id": created}})


@router.get("/v1/boards")
@router.get("/v1/boards/", include_in_schema=False)
async def list_boards(request: Request, key: AdminKey) -> Response:
    rt = runtime_of(request)
    found = await run_in_threadpool(boards.all_boards, rt.meta, key.tenant)
    return json_response({"boards": found})


@router.get("/v1/boards/{board_id}")
async def get_board(request: Request, key: AdminKey, board_id: str) -> Response:
    rt = runtime_of(request)
    found = await run_in_threadpool(boards.get, rt.meta, key.tenant, board_id)
    return json_response({"board": found})


@router.put("/v1/boards/{board_id}")
async def update_board(request: Request, key: AdminKey, board_id: str) -> Response:
    """Partial update: the fields sent replace the stored ones, the rest stay."""
    rt = runtime_of(request)
    patch = await json_object(request, rt, "board")
    changed = await run_in_threadpool(boards.update, rt.meta, key.tenant, board_id, patch)
    return json_response({"board": changed})


@router.delete("/v1/boards/{board_id}")
async def delete_board(request: Request, key: AdminKey, board_id: str) -> Response:
    rt = runtime_of(request)
    await run_in_threadpool(boards.delete, rt.meta, key.tenant, board_id)
    return json_response({"board": {"id": board_id}})
