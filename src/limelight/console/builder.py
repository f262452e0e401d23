"""The query builder: namespaces, calculations, filters, group-bys, orders and granularity
over a timeframe; its run charted and tabled by the page's script; saved queries.

The page's address holds the query (see ``query_form``), so a link shares it.
Runs go through the run service, as ``POST /v1/query_run`` does; saved queries
through ``saved_queries``, as the Queries API does.
"""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import parse_qsl

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight import boards, saved_queries
from limelight.console.datasets import known_keys
from limelight.console.query_form import (
    CALCULATION_OPERATORS,
    LIST_OPERATIONS,
    NO_VALUE_OPERATIONS,
    OPERATIONS,
    FormRows,
    fields_from_params,
    params_from_fields,
)
from limelight.console.render import query_string, render, see_other
from limelight.console.route import console_router
from limelight.console.running import start
from limelight.console.scope import Here, Place
from limelight.console.session import (
    check_csrf,
    form_fields,
    form_pairs,
    is_refusal,
    refusals,
    refused,
    shown_once,
)
from limelight.console.timeframe import PRESETS, Window, window_of
from limelight.datasets import SYSTEM_KEYS
from limelight.errors import BadRequest, ExposedError
from limelight.query.bubble_up_spec import QUERY_FIELDS, validate_bubble_up
from limelight.query.spec import QueryFields, fields_to_json, validate_fields
from limelight.runs import RunView
from limelight.runs.investigate import bubble_up
from limelight.runs.waiting import current, read_answer, settled
from limelight.times import parse_duration
from limelight.web.access import note_error
from limelight.web.request import runtime_of

router = console_router()
# The parameters that make up a query (everything else is the page's: timeframe, ..).
QUERY_PARAMS = frozenset(
    {"nt", "nv", "co", "ck", "ca", "fk", "fo", "fv", "fc", "g", "ok", "od", "q", "qr", "qc"}
    | {"limit"}
)
PAGE_PARAMS = ("range", "from", "to", "gran", "saved")
RUN_WAIT_SECONDS = 5.0
MAX_POLL_WAIT_SECONDS = 20.0


def _query_pairs(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in pairs if k in QUERY_PARAMS]


def _granularity(text: str) -> int | None:
    if not text.strip():
        return None
    seconds = parse_duration(text)
    if seconds is None:
        raise BadRequest(
            "the granularity is a number and a unit: 30s, 5m, 1h or 1d",
            errors=[{"field": "granularity", "message": "a number and a unit: 30s, 5m, 1h, 1d"}],
        )
    return seconds * 1000


def _run_json(view: RunView) -> Response:
    run = orjson.dumps(view.info.to_json())
    body = b'{"query_run":' + run + b',"data":' + (view.data or b"null") + b"}"
    return Response(body, media_type="application/json", headers={"Cache-Control": "no-store"})


def _dataset_of(fields: dict[str, Any]) -> str | None:
    for ns in fields.get("namespaces") or []:
        if ns.get("type") == "dataset":
            return str(ns.get("value"))
    return None


@router.get("/env/{environment_id}/query")
async def builder(request: Request, here: Here) -> Response:
    rt = runtime_of(request)
    items = list(request.query_params.multi_items())
    single = dict(items)
    window = window_of(single)
    saved_id = single.get("saved") or None
    saved: dict[str, Any] | None = None
    if saved_id:
        saved = await run_in_threadpool(saved_queries.get, rt.meta, here.tenant, saved_id)
    pairs = _query_pairs(items)
    if saved is not None and not pairs:
        pairs = params_from_fields(saved)  # opened from the list: the saved query as it is
    raw = fields_from_params(pairs)
    errors: list[Any] = []
    spec: dict[str, Any] | None = None
    try:
        _granularity(single.get("gran", ""))
        if pairs:
            spec = fields_to_json(validate_fields(raw))
    except BadRequest as exc:
        errors = exc.errors or [{"field": "query", "message": exc.reason}]
        note_error(request, exc)
    dataset = _dataset_of(raw)
    keys = await run_in_threadpool(known_keys, rt, here.tenant, dataset) if dataset else SYSTEM_KEYS
    listed = await run_in_threadpool(saved_queries.all_queries, rt.meta, here.tenant)
    # A saved query can be added to a board ("Add to board").
    board_list = await run_in_threadpool(boards.all_boards, rt.meta, here.tenant) if saved else []
    address = pairs + [(k, v) for k, v in items if k in PAGE_PARAMS and k != "saved"]
    if saved_id:
        address.append(("saved", saved_id))
    return render(
        "builder.html",
        400 if errors else 200,
        here=here,
        section="query",
        rows=FormRows.of(pairs),
        window=window,
        presets=PRESETS,
        granularity=single.get("gran", ""),
        operations=OPERATIONS,
        no_value_operations=NO_VALUE_OPERATIONS,
        list_operations=LIST_OPERATIONS,
        calculation_operators=CALCULATION_OPERATORS,
        keys=keys,
        errors=errors,
        spec=spec,
        run_address=query_string(address),
        saved=saved,
        saved_queries=listed,
        boards=board_list,
        visualizations=boards.VISUALIZATIONS,
        columns=range(1, boards.COLUMNS + 1),
    )


@router.post("/env/{environment_id}/query/run")
async def run_query(request: Request, here: Here) -> Response:
    """Start a run of the query in the body (the builder's address); answered like
    ``POST /v1/query_run?wait=``: the run and its data once it settles."""
    check_csrf(request, here.user, {})
    rt = runtime_of(request)
    pairs = await form_pairs(request)
    single = dict(pairs)
    fields: QueryFields = validate_fields(fields_from_params(_query_pairs(pairs)))
    window: Window = window_of(single)
    view = await start(
        rt, here.tenant, fields, window, granularity=_granularity(single.get("gran", ""))
    )
    return _run_json(await settled(rt.runs, here.tenant, view, RUN_WAIT_SECONDS))


# The region of a heatmap that BubbleUp compares with the rest, as the builder's script
# sends it: (form field, the API's selection field).
REGION_FIELDS = (("sf", "from"), ("st", "to"), ("smin", "min"), ("smax", "max"))


def _region(single: dict[str, str]) -> dict[str, Any]:
    """The selection of ``POST /v1/bubble_up`` from the form's region fields."""
    region: dict[str, Any] = {"key": single.get("sk", "")}
    for field, name in REGION_FIELDS:
        try:
            number = float(single.get(field, ""))
        except ValueError:
            number = math.nan
        # inf and nan, and a time past 64 bits, answered 500 (int() of them; orjson).
        if not math.isfinite(number) or (name in ("from", "to") and abs(number) >= 2**63):
            raise BadRequest(
                "the selected region is not valid",
                errors=[{"field": f"selection.{name}", "message": "must be a number"}],
            )
        region[name] = int(number) if name in ("from", "to") else number
    return region


@router.post("/env/{environment_id}/query/bubble_up")
async def bubble_up_region(request: Request, here: Here) -> Response:
    """What sets the events of a region of the builder's heatmap apart from the query's
    other events: the query and timeframe of the builder's address, the region of the
    form; answered as ``POST /v1/bubble_up`` answers."""
    check_csrf(request, here.user, {})
    rt = runtime_of(request)
    pairs = await form_pairs(request)
    single = dict(pairs)
    raw = fields_from_params(_query_pairs(pairs))
    window = window_of(single)
    body = {name: raw[name] for name in QUERY_FIELDS if name in raw}
    body |= {"from": window.from_ms, "to": window.to_ms, "selection": _region(single)}
    asked = validate_bubble_up(orjson.dumps(body))

    def compare(deadline: float) -> dict[str, Any]:
        return bubble_up(rt.events, here.tenant, asked, rt.runs.limits, deadline)

    answer = await read_answer(rt.runs, here.tenant, compare)
    return Response(
        orjson.dumps(answer), media_type="application/json", headers={"Cache-Control": "no-store"}
    )


@router.get("/env/{environment_id}/query/runs/{run_id}")
async def poll_run(request: Request, here: Here, run_id: str, wait: float = 0.0) -> Response:
    rt = runtime_of(request)
    view = await current(rt.runs, here.tenant, run_id)
    wait = min(max(wait, 0.0), MAX_POLL_WAIT_SECONDS)
    return _run_json(await settled(rt.runs, here.tenant, view, wait))


# -- saved queries ----------------------------------------------------------------------


def _saved_fields(form: dict[str, str]) -> dict[str, Any]:
    """The query of a save form: the builder's address, with the name and description."""
    pairs = parse_qsl(form.get("builder", ""), keep_blank_values=True)
    fields = fields_from_params(_query_pairs(pairs))
    fields["name"] = form.get("name", "").strip()
    if description := form.get("description", "").strip():
        fields["description"] = description
    if not fields["name"]:
        raise BadRequest(
            "a saved query needs a name", errors=[{"field": "name", "message": "is required"}]
        )
    return fields


def _builder_link(here: Place, query_id: str, form: dict[str, str]) -> str:
    pairs = parse_qsl(form.get("builder", ""), keep_blank_values=True)
    kept = [(k, v) for k, v in pairs if k in QUERY_PARAMS or k in ("range", "from", "to", "gran")]
    return f"{here.base}/query" + query_string([*kept, ("saved", query_id)])


@router.post("/env/{environment_id}/queries")
async def save_query(request: Request, here: Here) -> Response:
    form = await form_fields(request)
    check_csrf(request, here.user, form)
    fields = _saved_fields(form)
    rt = runtime_of(request)
    query_id = await run_in_threadpool(
        saved_queries.create, rt.meta, here.tenant, fields, here.user.user_id
    )
    return see_other(_builder_link(here, query_id, form))


@router.post("/env/{environment_id}/queries/{query_id}")
async def update_query(request: Request, here: Here, query_id: str) -> Response:
    """The saved query becomes what the builder shows (fields it lacks are removed)."""
    form = await form_fields(request)
    check_csrf(request, here.user, form)
    fields = _saved_fields(form)
    rt = runtime_of(request)
    await run_in_threadpool(
        lambda: saved_queries.update(rt.meta, here.tenant, query_id, fields, replace=True)
    )
    return see_other(_builder_link(here, query_id, form))


@router.get("/env/{environment_id}/queries")
async def queries_page(request: Request, here: Here) -> Response:
    """The saved queries, and why this session's last delete was refused (shown once)."""
    rt = runtime_of(request)
    errors = refusals(await shown_once(request, f"{here.base}/queries"))
    listed = await run_in_threadpool(saved_queries.all_queries, rt.meta, here.tenant)
    for query in listed:
        query["address"] = query_string(params_from_fields(query) + [("saved", query["id"])])
    return render("queries.html", here=here, section="queries", queries=listed, errors=errors)


@router.post("/env/{environment_id}/queries/{query_id}/delete")
async def delete_query(request: Request, here: Here, query_id: str) -> Response:
    check_csrf(request, here.user, await form_fields(request))
    rt = runtime_of(request)
    page = f"{here.base}/queries"
    try:
        await run_in_threadpool(saved_queries.delete, rt.meta, here.tenant, query_id)
    except ExposedError as exc:
        if not is_refusal(exc):
            raise
        # Used by an alert or a board: back to the list, which names them.
        return await refused(request, page, exc)
    return see_other(page)
