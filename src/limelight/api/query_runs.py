"""Query runs: ``POST /v1/query_run`` starts one, ``GET /v1/query_run/<id>`` polls it.

A poll may wait for the run to settle (``?wait=<seconds>``): the answer comes
the moment the run completes, which keeps a client's overhead to one round
trip instead of a polling interval. The creation takes ``wait`` too (an
extension): it then answers like a poll, the run with its data, so a client
whose run finishes in time needs one round trip in all.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Annotated, Any

import orjson
import pydantic
from fastapi import APIRouter, Depends, Query
from pydantic import ConfigDict, Field, StrictStr
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.api.body import read_body
from limelight.api.deps import admin_key, runtime_of
from limelight.auth.api_keys import KeyContext
from limelight.errors import BadRequest
from limelight.query.events_plan import MAX_OFFSET
from limelight.query.spec import MAX_LIMIT, QueryFields, validate_fields
from limelight.runs import RunRequest, RunStatus, RunView
from limelight.runtime import Runtime
from limelight.store.meta import queries_repo as repo

router = APIRouter()
AdminKey = Annotated[KeyContext, Depends(admin_key)]
MAX_WAIT_SECONDS = 60.0
POLL_FIRST_SECONDS = 0.05
POLL_MOST_SECONDS = 0.4


# The last millisecond of the year 9999: every time a client can mean, and far from
# the 64-bit range the run's record and the engine's parameters hold (2**63 made a 500).
MAX_UNIX_MS = 253_402_300_799_999


class RunBody(pydantic.BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    query_id: StrictStr | None = None
    query: dict[str, Any] | None = None
    from_: int = Field(alias="from", ge=0, le=MAX_UNIX_MS, description="unix milliseconds")
    to: int = Field(ge=0, le=MAX_UNIX_MS, description="unix milliseconds")
    limit: int | None = Field(None, ge=1, le=MAX_LIMIT)
    offset: int | None = Field(None, ge=0, le=MAX_OFFSET)
    granularity: int | None = Field(
        None, ge=1, le=MAX_UNIX_MS, description="bucket width in milliseconds"
    )


def _parse(body: bytes) -> RunBody:
    try:
        return RunBody.model_validate_json(body or b"{}")
    except pydantic.ValidationError as exc:
        errors = [
            {
                "field": ".".join(str(p) for p in e["loc"]) or "body",
                "message": "unknown field" if e["type"] == "extra_forbidden" else e["msg"],
            }
            for e in exc.errors()
        ]
        raise BadRequest(message="Invalid query run", errors=errors) from None


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


Wait = Annotated[float, Query(ge=0, le=MAX_WAIT_SECONDS)]


@router.post("/v1/query_run")
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
        return _run_response(await _settled(rt, key, view, wait))
    # The run as created: its outcome comes from polling (however fast it finished), so
    # a client has one way to read it.
    return Response(
        orjson.dumps({"query_run": {"id": view.info.id, "status": RunStatus.STARTED}}),
        media_type="application/json",
    )


@router.get("/v1/query_run/{run_id}")
async def get_run(request: Request, key: AdminKey, run_id: str, wait: Wait = 0.0) -> Response:
    """The run; with ``wait`` the answer is held until it settles or ``wait`` seconds pass."""
    rt = runtime_of(request)
    return _run_response(await _settled(rt, key, await _current(rt, key, run_id), wait))


async def _current(rt: Runtime, key: KeyContext, run_id: str) -> RunView:
    # A live run is answered from memory here; only the database is read off the loop.
    view = rt.runs.peek(key.tenant, run_id)
    return view if view is not None else await run_in_threadpool(rt.runs.get, key.tenant, run_id)


async def _settled(rt: Runtime, key: KeyContext, view: RunView, wait: float) -> RunView:
    """``view`` once its run has settled, or as it stands after ``wait`` seconds.

    A run of this process wakes its waiters the moment it settles; a run created
    by another API process is read from its record again, first after 50 ms,
    then less often (up to every 0.4 s).
    """
    runs, run_id = rt.runs, view.info.id
    loop = asyncio.get_running_loop()
    until = loop.time() + wait
    poll = POLL_FIRST_SECONDS
    while view.status is RunStatus.STARTED and (left_to_wait := until - loop.time()) > 0:
        settled = asyncio.Event()

        def wake(event: asyncio.Event = settled) -> None:  # called on a worker thread
            loop.call_soon_threadsafe(event.set)

        left = runs.watch(key.tenant, run_id, wake)
        if left > 0:
            # A little past the run's deadline, so a timed-out run is answered as FAILED;
            # a queued run's deadline moves when it starts, so look again after it.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(settled.wait(), timeout=min(left_to_wait, left + 0.05))
        else:  # settled meanwhile, or a run of another process: read it again
            view = await _current(rt, key, run_id)
            if view.status is not RunStatus.STARTED:
                break
            await asyncio.sleep(min(left_to_wait, poll))
            poll = min(poll * 2, POLL_MOST_SECONDS)
        view = await _current(rt, key, run_id)
    return view
