"""Query runs: ``POST /v1/query_run`` starts one, ``GET /v1/query_run/<id>`` polls it.

A poll may wait for the run to settle (``?wait=<seconds>``): the answer comes
the moment the run completes, which keeps a client's overhead to one round
trip instead of a polling interval. The creation takes ``wait`` too (an
extension): it then answers like a poll, the run with its data, so a client
whose run finishes in time needs one round trip in all.
"""

from __future__ import annotations

from typing import Annotated, Any

import orjson
import pydantic
from fastapi import APIRouter, Depends, Query
from pydantic import ConfigDict, Field, StrictInt, StrictStr
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.api.deps import admin_key
from limelight.api.openapi import FOUND, KEYED, admin_only, body, error, ok
from limelight.api.queries import QUERY_ID
from limelight.auth.api_keys import KeyContext
from limelight.errors import BadRequest
from limelight.query.events_plan import MAX_OFFSET
from limelight.query.spec import MAX_LIMIT, QueryFields, validate_fields
from limelight.runs import RunRequest, RunStatus, RunView
from limelight.runs.waiting import current, settled
from limelight.runtime import Runtime
from limelight.store.meta import queries_repo as repo
from limelight.validation import field_errors
from limelight.web.body import read_body
from limelight.web.request import runtime_of

router = APIRouter(tags=["query runs"])
AdminKey = Annotated[KeyContext, Depends(admin_key)]
MAX_WAIT_SECONDS = 60.0


# The last millisecond of the year 9999: every time a client can mean, and far from
# the 64-bit range the run's record and the engine's parameters hold (2**63 made a 500).
MAX_UNIX_MS = 253_402_300_799_999


class RunBody(pydantic.BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    query_id: StrictStr | None = None
    query: dict[str, Any] | None = None
    # Strict, as the other bodies' numbers: `"from": true` is not the millisecond 1.
    from_: StrictInt = Field(alias="from", ge=0, le=MAX_UNIX_MS, description="unix milliseconds")
    to: StrictInt = Field(ge=0, le=MAX_UNIX_MS, description="unix milliseconds")
    limit: StrictInt | None = Field(None, ge=1, le=MAX_LIMIT)
    offset: StrictInt | None = Field(None, ge=0, le=MAX_OFFSET)
    granularity: StrictInt | None = Field(
        None, ge=1, le=MAX_UNIX_MS, description="bucket width in milliseconds"
    )


def _parse(body: bytes) -> RunBody:
    try:
        return RunBody.model_validate_json(body or b"{}")
    except pydantic.ValidationError as exc:
        raise BadRequest(message="Invalid query run", errors=field_errors(exc)) from None


def _inline_fields(query: dict[str, Any]) -> QueryFields:
    try:
        return validate_fields(query)
    except BadRequest as exc:
        for error in exc.errors or []:
            error["field"] = f"query.{error['field']}"
        raise


def _saved_fields(rt: Runtime, key: KeyContext, query_id: str) -> QueryFields:
    with rt.meta.session() as s:
        stored = repo.get_query(s, key.tenant, query_id).fields
    return validate_fields(stored)


def _run_response(view: RunView, status: int = 200) -> Response:
    # The data is already JSON (kept that way for polling): splice it in, don't re-parse it.
    run = orjson.dumps(view.info.to_json())
    body = b'{"query_run":' + run + b',"data":' + (view.data or b"null") + b"}"
    return Response(body, status_code=status, media_type="application/json")


Wait = Annotated[float, Query(ge=0, le=MAX_WAIT_SECONDS, allow_inf_nan=False)]


RUN_ID = "1m80a1b2c3d4e5f6g7h"
RUN = {
    "query_run": {
        "id": RUN_ID,
        "query_id": QUERY_ID,
        "from": 1763683200000,
        "to": 1763686800000,
        "limit": 100,
        "offset": 0,
        "granularity": 60000,
        "status": "COMPLETED",
    },
    "data": {
        "aggregates": [
            {"groups": {"data.userId": "u-1"}, "values": {"P99(duration)": 412.5, "COUNT": 31}}
        ],
        "series": [{"time": 1763683200000, "data": []}],
        "statistics": {"elapsed": 0.012, "rows_read": 52311, "bytes_read": 1893020},
    },
}


@router.post(
    "/v1/query_run",
    summary="Run a saved or an inline query over a timeframe",
    description="Answers at once with the run's id; poll it, or pass `wait` to get "
    "the finished run in this answer.",
    openapi_extra=admin_only(
        body("RunBody", {"query_id": QUERY_ID, "from": 1763683200000, "to": 1763686800000})
    ),
    responses={
        **ok(
            "Started (or, with `wait`, the run as polling would answer).",
            {"query_run": {"id": RUN_ID, "status": "STARTED"}},
        ),
        **KEYED,
        "429": error("Too many run creations this minute; see `Retry-After`."),
    },
)
async def create_run(request: Request, key: AdminKey, wait: Wait = 0.0) -> Response:
    rt = runtime_of(request)
    run = _parse(await read_body(request, rt.settings.max_request_bytes))
    if (run.query_id is None) == (run.query is None):
        raise BadRequest(
            message="Invalid query run",
            errors=[{"field": "query_id", "message": "send either query_id or query (inline)"}],
        )

    def create() -> RunView:
        if run.query_id is not None:
            fields = _saved_fields(rt, key, run.query_id)
        else:
            fields = _inline_fields(run.query or {})
        request = RunRequest(
            fields=fields,
            from_ms=run.from_,
            to_ms=run.to,
            query_id=run.query_id,
            limit=run.limit,
            offset=run.offset,
            granularity=run.granularity,
        )
        return rt.runs.create(key.tenant, request)

    view = await run_in_threadpool(create)
    if wait > 0:
        return _run_response(await settled(rt.runs, key.tenant, view, wait))
    # The run as created: its outcome comes from polling (however fast it finished), so
    # a client has one way to read it.
    return Response(
        orjson.dumps({"query_run": {"id": view.info.id, "status": RunStatus.STARTED}}),
        media_type="application/json",
    )


@router.get(
    "/v1/query_run/{run_id}",
    summary="A run and its result",
    openapi_extra=admin_only(),
    responses={
        **ok(
            "`STARTED`, `COMPLETED` with `data`, or `FAILED` with `error`. `data.warnings`"
            " (only when there is one) names each dataset of the query the environment"
            " never held: `[\"no dataset 'logz' here; known: logs, otel\"]`.",
            RUN,
        ),
        **FOUND,
        "410": error("The result has expired; run the query again."),
    },
)
async def get_run(request: Request, key: AdminKey, run_id: str, wait: Wait = 0.0) -> Response:
    """The run; with ``wait`` the answer is held until it settles or ``wait`` seconds pass."""
    rt = runtime_of(request)
    return _run_response(
        await settled(rt.runs, key.tenant, await current(rt.runs, key.tenant, run_id), wait)
    )
