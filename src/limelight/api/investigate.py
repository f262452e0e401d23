"""Investigating events: a key's top values, and BubbleUp.

``GET /v1/datasets/<name>/keys/<key>/values`` answers the most frequent values
of a key among the timeframe's events (and the filters); ``POST /v1/bubble_up``
what sets a selection of a query's events apart from the rest. Both answer at
once, computed on a query-run worker in the workspace's turn within a run's
limits. Same keys and error rules as the Queries API: 401 without a key, 403
for an ingest key, 400 naming the field.
"""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Query
from starlette.requests import Request
from starlette.responses import Response

from limelight.api.deps import admin_key
from limelight.api.openapi import FOUND, KEYED, Answers, admin_only, body, error, ok
from limelight.auth.api_keys import KeyContext
from limelight.datasets import timeframe
from limelight.errors import BadRequest
from limelight.query.bubble_up_spec import validate_bubble_up
from limelight.query.field_values import DEFAULT_LIMIT, MAX_LIMIT
from limelight.query.keys import valid_key
from limelight.query.spec import Filter, validate_fields
from limelight.runs.investigate import bubble_up, field_values
from limelight.runs.waiting import read_answer
from limelight.web.body import read_body
from limelight.web.paths import TEXT
from limelight.web.problems import json_response
from limelight.web.request import runtime_of

router = APIRouter(tags=["investigate"])
AdminKey = Annotated[KeyContext, Depends(admin_key)]
UnixMs = Annotated[int | None, Query(ge=0, le=2**53, description="unix ms")]


def parse_filters(text: str | None) -> list[Filter]:
    """The ``filters`` query parameter: a JSON array of ``{key, operation, value}``."""
    if text is None or not text.strip():
        return []
    try:
        # orjson, as every body is read: the standard library's parser passed Python's
        # recursion limit on 3,000 brackets (a 500), and took a lone surrogate (\ud800)
        # that the engine then failed to bind (a 503).
        parsed: Any = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise BadRequest(
            message="Invalid filters",
            errors=[{"field": "filters", "message": "must be a JSON array of filters"}],
        ) from None
    if not isinstance(parsed, list):
        raise BadRequest(
            message="Invalid filters",
            errors=[{"field": "filters", "message": "must be a JSON array of filters"}],
        )
    return validate_fields({"filters": parsed}).filters or []


# Both reads run on the query-run workers, within a run's limits.
RUN_LIMITED: Answers = {
    "429": error("Too many runs this minute; see `Retry-After`."),
    "503": error("Over the run's time or memory limit, or the server is busy."),
}
VALUES = {
    "key": "http.status",
    "values": [
        {"value": 200, "count": 9120, "share": 0.912},
        {"value": 500, "count": 880, "share": 0.088},
    ],
    "distinct": 2,
    "events": 10000,
    "sampled": False,
}


@router.get(
    f"/v1/datasets/{{name}}/keys/{{key:{TEXT}}}/values",
    summary="The most frequent values of a key",
    description="Among the dataset's events in `[from, to)` (unix ms; `to` defaults to "
    "now, `from` to 24 hours before it) that match `filters` (a JSON-encoded array of "
    "`{key, operation, value}`, as in queries, e.g. "
    '`[{"key":"duration","operation":">","value":100}]`): the top `limit` '
    "(1-100, default 10) "
    "values of the key with their count and share of the events holding it, the number "
    "of distinct values, and how many events hold the key. An array counts as each of "
    "its elements. At most the newest 1,000,000 events holding the key are read: "
    "`sampled` says the newest 1,000,000 were read and the timeframe may hold more; "
    "false means every event holding the key was read.",
    openapi_extra=admin_only(),
    responses={**ok("The values, most frequent first.", VALUES), **FOUND, **RUN_LIMITED},
)
async def key_values(
    request: Request,
    auth: AdminKey,
    name: str,
    key: str,
    from_: Annotated[int | None, Query(alias="from", ge=0, le=2**53)] = None,
    to: UnixMs = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    filters: str | None = None,
) -> Response:
    """The most frequent values of a key (default: over the last 24 hours)."""
    if problem := valid_key(key):
        raise BadRequest(message="Invalid key", errors=[{"field": "key", "message": problem}])
    parsed = parse_filters(filters)
    rt = runtime_of(request)
    frame = timeframe(from_, to)

    def work(deadline: float) -> dict[str, Any]:
        return field_values(
            rt.events,
            auth.tenant,
            name,
            key,
            parsed,
            frame,
            limit,
            rt.runs.limits,
            deadline,
        )

    return json_response(await read_answer(rt.runs, auth.tenant, work))


BUBBLE_UP = {
    "namespaces": [{"type": "dataset", "value": "requests"}],
    "from": 1763683200000,
    "to": 1763686800000,
    "selection": {"filters": [{"key": "duration", "operation": ">", "value": 870}]},
}
BUBBLED_UP = {
    "selection": 3000,
    "baseline": 97000,
    "sampled": False,
    "keys_left_out": 0,
    "near_unique": ["requestId"],
    "dimensions": [
        {
            "key": "region",
            "score": 0.83,
            "values": [
                {"value": "eu-west-2", "selection": 1.0, "baseline": 0.17},
                {"value": "us-east-1", "selection": 0.0, "baseline": 0.17},
            ],
        }
    ],
}


@router.post(
    "/v1/bubble_up",
    summary="What sets a selection of a query's events apart (BubbleUp)",
    description="The query's `namespaces`, `filters`, `filter_combination` and "
    '`needle` over `[from, to)`; the `selection` is `{"filters": [...]}` or a '
    "heatmap region `{from, to, key, min, max}` (both ends of the number included), the "
    "baseline every other event of the query. For each key the events hold (system "
    "fields included, the selection's keys left out), the share of each side holding "
    "its most common values (numbers with many values as decile ranges "
    "`{from, to}`, a missing key as null); keys ranked by `score`, the total variation "
    "distance of the two distributions (0: alike, 1: no value in common). Each side "
    "reads at most about its newest 7,000,000 / (keys + 1) events (1,000,000 at most): "
    "`sampled` says a side held more. Keys of ids are left out, named in `near_unique`.",
    openapi_extra=admin_only(
        body({"type": "object", "required": ["from", "to", "selection"]}, BUBBLE_UP)
    ),
    responses={**ok("Keys, most different first.", BUBBLED_UP), **KEYED, **RUN_LIMITED},
)
async def bubble_up_route(request: Request, auth: AdminKey) -> Response:
    """What sets a selection of a query's events apart from the rest of them."""
    rt = runtime_of(request)
    asked = validate_bubble_up(await read_body(request, rt.settings.max_request_bytes))

    def work(deadline: float) -> dict[str, Any]:
        return bubble_up(rt.events, auth.tenant, asked, rt.runs.limits, deadline)

    return json_response(await read_answer(rt.runs, auth.tenant, work))
