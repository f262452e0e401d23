"""Boards: the list, and a board's page where every panel's query runs over the board's
timeframe at once and is drawn as its panel says; panels added from the builder,
moved, resized and removed by forms that answer 303.

Everything goes through ``boards`` (the domain code of the Boards API) and the
run service the builder uses: the page starts every panel's run before it waits
for any, so a board takes about as long as its slowest panel, not their sum
(the runs then take their workspace's turns in the run scheduler).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight import boards, saved_queries
from limelight.console.numbers import ascii_whole
from limelight.console.render import query_string, render, see_other
from limelight.console.route import console_router
from limelight.console.running import Outcome, outcomes, start
from limelight.console.scope import Here, Place
from limelight.console.session import (
    check_csrf,
    form_fields,
    is_refusal,
    refusals,
    refused,
    shown_once,
)
from limelight.console.timeframe import PRESETS, Window, window_of
from limelight.errors import ExposedError
from limelight.query.calculations import value_name
from limelight.query.spec import validate_fields
from limelight.runs import RunView
from limelight.runtime import Runtime
from limelight.tenant import Tenant
from limelight.web.request import runtime_of

router = console_router()
DEFAULT_RANGE = "1h"
TIMEFRAME_PARAMS = ("range", "from", "to")


@dataclass(frozen=True)
class PanelRun:
    """A panel as its page draws it: the run's data, or why there is none."""

    panel: dict[str, Any]
    query: dict[str, Any]
    data: dict[str, Any] | None
    error: str | None

    def to_json(self) -> dict[str, Any]:
        calcs = self.query.get("calculations") or []
        names = [value_name(c["operator"], c.get("key"), c.get("alias")) for c in calcs]
        return {
            **self.panel,
            "name": self.panel["title"] or self.query.get("name") or self.query["id"],
            "calculations": bool(calcs),
            # In the query's order: the page's JSON has its keys sorted, so the values'
            # own order put COUNT before MAX(duration) whatever the query said first.
            "values": names,
            "heatmap": next(
                (n for c, n in zip(calcs, names, strict=True) if c["operator"] == "HEATMAP"), None
            ),
            "data": self.data,
            "error": self.error,
        }


async def _start(
    rt: Runtime, tenant: Tenant, query: dict[str, Any], window: Window
) -> RunView | ExposedError:
    try:
        fields = validate_fields(saved_queries.writable(query))
        return await start(rt, tenant, fields, window, query_id=query["id"])
    except ExposedError as exc:  # refused (a full queue, the runs per minute): this panel only
        return exc


async def panel_runs(
    rt: Runtime,
    tenant: Tenant,
    panels: list[dict[str, Any]],
    queries: list[dict[str, Any]],
    window: Window,
) -> list[PanelRun]:
    """Every panel's run, all started before any is waited on."""
    started = await asyncio.gather(*(_start(rt, tenant, q, window) for q in queries))
    views = [v for v in started if isinstance(v, RunView)]
    settled = iter(await outcomes(rt, tenant, views))
    found: list[PanelRun] = []
    for panel, query, view in zip(panels, queries, started, strict=True):
        if isinstance(view, ExposedError):
            found.append(PanelRun(panel, query, None, view.reason or view.message))
            continue
        outcome: Outcome = next(settled)
        found.append(PanelRun(panel, query, outcome.data, outcome.error))
    return found


def _window(request: Request) -> Window:
    return window_of(dict(request.query_params), default=DEFAULT_RANGE)


def _board_link(here: Place, board_id: str, form: dict[str, str] | None = None) -> str:
    """The board's page, over the timeframe the form came from (when it names a valid one)."""
    params: list[tuple[str, str]] = []
    if form is not None:
        try:
            params = window_of({k: form.get(k, "") for k in TIMEFRAME_PARAMS}).params()
        except ExposedError:
            params = []
    return f"{here.base}/boards/{board_id}" + query_string(params)


@router.get("/env/{environment_id}/boards")
async def boards_page(request: Request, here: Here) -> Response:
    rt = runtime_of(request)
    listed = await run_in_threadpool(boards.all_boards, rt.meta, here.tenant)
    return render("boards.html", here=here, section="boards", boards=listed)


@router.post("/env/{environment_id}/boards")
async def create_board(request: Request, here: Here) -> Response:
    form = await form_fields(request)
    check_csrf(request, here.user, form)
    body = {
        "name": form.get("name", ""),
        "description": form.get("description", "").strip() or None,
    }
    rt = runtime_of(request)
    board_id = await run_in_threadpool(boards.create, rt.meta, here.tenant, body, here.user.user_id)
    return see_other(_board_link(here, board_id))


@router.get("/env/{environment_id}/boards/{board_id}")
async def board_page(request: Request, here: Here, board_id: str) -> Response:
    rt = runtime_of(request)
    window = _window(request)
    board, queries = await run_in_threadpool(boards.with_queries, rt.meta, here.tenant, board_id)
    errors = refusals(await shown_once(request, f"{here.base}/boards/{board_id}"))
    runs = await panel_runs(rt, here.tenant, board["panels"], queries, window)
    timeframe = window.params()
    for run in runs:
        builder = [("saved", run.query["id"]), *timeframe]
        run.panel["builder"] = f"{here.base}/query" + query_string(builder)
    return render(
        "board.html",
        here=here,
        section="boards",
        board=board,
        panels=[r.to_json() for r in runs],
        window=window,
        presets=PRESETS,
        timeframe=dict(timeframe),
        visualizations=boards.VISUALIZATIONS,
        columns=range(1, boards.COLUMNS + 1),
        errors=errors,
    )


@router.post("/env/{environment_id}/boards/{board_id}")
async def edit_board(request: Request, here: Here, board_id: str) -> Response:
    """The board's name and description, as the form has them."""
    form = await form_fields(request)
    check_csrf(request, here.user, form)
    change = {"name": form.get("name", ""), "description": form.get("description", "") or None}
    rt = runtime_of(request)
    await run_in_threadpool(boards.update, rt.meta, here.tenant, board_id, change)
    return see_other(_board_link(here, board_id, form))


@router.post("/env/{environment_id}/boards/{board_id}/delete")
async def delete_board(request: Request, here: Here, board_id: str) -> Response:
    check_csrf(request, here.user, await form_fields(request))
    rt = runtime_of(request)
    await run_in_threadpool(boards.delete, rt.meta, here.tenant, board_id)
    return see_other(f"{here.base}/boards")


def _width(text: str) -> object:
    """The width typed, as a number when it is one (else as typed: the error names it)."""
    number = ascii_whole(text, 6)
    return text if number is None else number


@router.post("/env/{environment_id}/board_panels")
async def add_panel(request: Request, here: Here) -> Response:
    """A saved query onto a board (the builder's "Add to board"), or onto a new board
    named in the form."""
    form = await form_fields(request)
    check_csrf(request, here.user, form)
    panel = {
        "query_id": form.get("query_id", ""),
        "title": form.get("title", "").strip(),
        "visualization": form.get("visualization", "line"),
        "width": _width(form.get("width", "2")),
    }
    rt = runtime_of(request)
    board_id = form.get("board", "")
    if board_id:
        await run_in_threadpool(boards.add_panel, rt.meta, here.tenant, board_id, panel)
    else:
        body = {"name": form.get("new_board", ""), "panels": [panel]}
        board_id = await run_in_threadpool(
            boards.create, rt.meta, here.tenant, body, here.user.user_id
        )
    return see_other(_board_link(here, board_id, form))


async def _panel_change(
    request: Request,
    here: Here,
    board_id: str,
    form: dict[str, str],
    change: Callable[[], object],
) -> Response:
    """The board's page after a panel form, over the form's timeframe. A refusal (a panel
    another tab removed) goes back there too, saying why: answered with an error page, the
    browser stayed on the form's address, where a reload sent the form again."""
    back = _board_link(here, board_id, form)
    try:
        await run_in_threadpool(change)
    except ExposedError as exc:
        if not is_refusal(exc):
            raise
        return await refused(request, f"{here.base}/boards/{board_id}", exc, back)
    return see_other(back)


@router.post("/env/{environment_id}/boards/{board_id}/panels/{panel_id}/move")
async def move_panel(request: Request, here: Here, board_id: str, panel_id: str) -> Response:
    form = await form_fields(request)
    check_csrf(request, here.user, form)
    steps = -1 if form.get("direction") == "earlier" else 1
    rt = runtime_of(request)
    change = partial(boards.move_panel, rt.meta, here.tenant, board_id, panel_id, steps)
    return await _panel_change(request, here, board_id, form, change)


@router.post("/env/{environment_id}/boards/{board_id}/panels/{panel_id}/width")
async def resize_panel(request: Request, here: Here, board_id: str, panel_id: str) -> Response:
    form = await form_fields(request)
    check_csrf(request, here.user, form)
    width = _width(form.get("width", ""))
    rt = runtime_of(request)
    change = partial(boards.resize_panel, rt.meta, here.tenant, board_id, panel_id, width)
    return await _panel_change(request, here, board_id, form, change)


@router.post("/env/{environment_id}/boards/{board_id}/panels/{panel_id}/delete")
async def remove_panel(request: Request, here: Here, board_id: str, panel_id: str) -> Response:
    form = await form_fields(request)
    check_csrf(request, here.user, form)
    rt = runtime_of(request)
    change = partial(boards.remove_panel, rt.meta, here.tenant, board_id, panel_id)
    return await _panel_change(request, here, board_id, form, change)
