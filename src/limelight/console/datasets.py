"""The datasets page (counts and last event time over a timeframe) and a dataset's keys."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.auth.environment_keys import ingest_key_for
from limelight.console.render import render
from limelight.console.route import console_router
from limelight.console.scope import Here
from limelight.console.timeframe import PRESETS, window_of
from limelight.datasets import SYSTEM_KEYS, dataset_keys, list_datasets, with_retention
from limelight.errors import NotFound
from limelight.runtime import Runtime
from limelight.tenant import Tenant
from limelight.web.request import runtime_of

router = console_router()


def known_keys(rt: Runtime, tenant: Tenant, dataset: str) -> list[dict[str, Any]]:
    """The dataset's keys (to suggest in forms); the system fields for an unknown dataset."""
    try:
        return dataset_keys(rt.events, tenant, dataset, rt.runs.limits)
    except NotFound:
        return SYSTEM_KEYS


@router.get("/env/{environment_id}/datasets")
async def datasets_page(request: Request, here: Here) -> Response:
    rt = runtime_of(request)
    window = window_of(request.query_params, default="24h")
    found = await run_in_threadpool(
        list_datasets, rt.events, here.tenant, rt.runs.limits, window.timeframe
    )
    found = await run_in_threadpool(with_retention, rt.meta, rt.settings, here.tenant, found)
    ingest_key = None
    if not found:
        ingest_key = await run_in_threadpool(ingest_key_for, rt.meta, here.env.environment_id)
    return render(
        "datasets.html",
        here=here,
        section="datasets",
        window=window,
        presets=PRESETS,
        datasets=found,
        ingest_key=ingest_key,
        events_url=rt.settings.events_url,
    )


@router.get("/env/{environment_id}/datasets/{name}")
async def dataset_page(request: Request, here: Here, name: str) -> Response:
    rt = runtime_of(request)
    keys = await run_in_threadpool(dataset_keys, rt.events, here.tenant, name, rt.runs.limits)
    return render("dataset.html", here=here, section="datasets", dataset=name, keys=keys)
