"""The Boards API: boards of the admin key's environment, with the Queries API's
envelopes and rules (401 without a key, 403 for an ingest key, 404 for another
environment's board, 400 with ``errors`` naming each invalid field)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight import boards
from limelight.api.deps import admin_key
from limelight.api.openapi import FOUND, KEYED, MANAGED_ID_TAKEN, admin_only, body, ok
from limelight.api.queries import QUERY_ID, ManagedId, json_object
from limelight.auth.api_keys import KeyContext
from limelight.web.problems import json_response
from limelight.web.request import runtime_of

router = APIRouter(tags=["boards"])
AdminKey = Annotated[KeyContext, Depends(admin_key)]


PANELS: list[dict[str, Any]] = [
    {"query_id": QUERY_ID, "title": "p99", "visualization": "line", "width": 2},
    {"query_id": "1m7z6a1b2c3d4e5f6g7", "title": "", "visualization": "number", "width": 1},
]
BOARD = {"name": "Checkout", "description": "what the checkout team watches", "panels": PANELS}
SAVED_BOARD = {
    "id": "1m8c0d1e2f3g4h5i6j7",
    "name": BOARD["name"],
    "description": BOARD["description"],
    "panels": [{"id": f"1m8c0d1e2f3g4h5i6k{i}", **panel} for i, panel in enumerate(PANELS)],
    "created_at": "2026-11-21T10:00:00.000Z",
    "updated_at": "2026-11-21T10:00:00.000Z",
    "author": "1m7y0a9b8c7d6e5f4g3",
}


@router.post(
    "/v1/boards",
    summary="Create a board",
    description="Panels are drawn in the order given, each `width` columns of a "
    "4-column grid (1 to 4, default 2); `visualization` is one of `line`, `bars`, "
    "`heatmap`, `number`, `table` (default `line`); an empty `title` shows the query's "
    "name. Every `query_id` is a saved query of the key's environment (400 otherwise).",
    openapi_extra=admin_only(body("BoardFields", BOARD)),
    responses={
        **ok("Created.", {"board": {"id": SAVED_BOARD["id"]}}),
        **KEYED,
        "409": MANAGED_ID_TAKEN,
    },
)
@router.post("/v1/boards/", include_in_schema=False)
async def create_board(request: Request, key: AdminKey, managed_id: ManagedId = None) -> Response:
    rt = runtime_of(request)
    data = await json_object(request, rt, "board")
    created = await run_in_threadpool(
        boards.create, rt.meta, key.tenant, data, key.author, managed_id
    )
    return json_response({"board": {"id": created}})


@router.get(
    "/v1/boards",
    summary="Every board of the environment, oldest first",
    openapi_extra=admin_only(),
    responses={**ok("The boards.", {"boards": [SAVED_BOARD]}), **KEYED},
)
@router.get("/v1/boards/", include_in_schema=False)
async def list_boards(request: Request, key: AdminKey) -> Response:
    rt = runtime_of(request)
    found = await run_in_threadpool(boards.all_boards, rt.meta, key.tenant)
    return json_response({"boards": found})


@router.get(
    "/v1/boards/{board_id}",
    summary="A board and its panels",
    openapi_extra=admin_only(),
    responses={**ok("The board.", {"board": SAVED_BOARD}), **FOUND},
)
async def get_board(request: Request, key: AdminKey, board_id: str) -> Response:
    rt = runtime_of(request)
    found = await run_in_threadpool(boards.get, rt.meta, key.tenant, board_id)
    return json_response({"board": found})


@router.put(
    "/v1/boards/{board_id}",
    summary="Change a board (the fields sent)",
    description="`panels`, when sent, is the whole new list (panel ids sent are "
    "ignored); `null` clears the description. A board as read back is a valid body.",
    openapi_extra=admin_only(body("BoardFields", {"name": "Checkout (prod)"})),
    responses={**ok("The board as it now is.", {"board": SAVED_BOARD}), **FOUND},
)
async def update_board(request: Request, key: AdminKey, board_id: str) -> Response:
    """Partial update: the fields sent replace the stored ones, the rest stay."""
    rt = runtime_of(request)
    patch = await json_object(request, rt, "board")
    changed = await run_in_threadpool(boards.update, rt.meta, key.tenant, board_id, patch)
    return json_response({"board": changed})


@router.delete(
    "/v1/boards/{board_id}",
    summary="Delete a board (its queries stay)",
    openapi_extra=admin_only(),
    responses={**ok("Deleted.", {"board": {"id": SAVED_BOARD["id"]}}), **FOUND},
)
async def delete_board(request: Request, key: AdminKey, board_id: str) -> Response:
    rt = runtime_of(request)
    await run_in_threadpool(boards.delete, rt.meta, key.tenant, board_id)
    return json_response({"board": {"id": board_id}})
