"""The Alerts API: alerts on saved queries of the admin key's environment, and their checks.

Same keys, envelopes and error rules as the Queries API: 401 without a key,
403 for an ingest key, 404 for another environment's alert, 400 with ``errors``
naming each bad field.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.api.deps import admin_key
from limelight.api.queries import ManagedId
from limelight.auth.api_keys import KeyContext
from limelight.web.body import read_json
from limelight.web.problems import json_response
from limelight.web.request import runtime_of

router = APIRouter(tags=["alerts"])
AdminKey = Annotated[KeyContext, Depends(admin_key)]


@router.post("/v1/alerts")
@router.post("/v1/alerts/", include_in_schema=False)
async def create_alert(request: Request, key: AdminKey, managed_id: ManagedId = None) -> Response:
    """Create an alert; the answer holds its id and its webhook secret (shown only here)."""
    body = await read_json(request, "alert")
    alerts = runtime_of(request).alerts
    created = await run_in_threadpool(alerts.create, key.tenant, body, key.user_id, managed_id)
    return json_response({"alert": created})


@router.get("/v1/alerts")
@router.get("/v1/alerts/", include_in_schema=False)
async def list_alerts(request: Request, key: AdminKey) -> Response:
    alerts = runtime_of(request).alerts
    return json_response({"alerts": await run_in_threadpool(alerts.all, key.tenant)})


@router.get("/v1/alerts/{alert_id}")
async def get_alert(request: Request, key: AdminKey, alert_id: str) -> Response:
    alerts = runtime_of(request).alerts
    return json_response({"alert": await run_in_threadpool(alerts.get, key.tenant, alert_id)})


@router.put("/v1/alerts/{alert_id}")
async def update_alert(request: Request, key: AdminKey, alert_id: str) -> Response:
    """Partial update: the fields sent replace the stored ones; the alert is checked again."""
    body = await read_json(request, "alert")
    alerts = runtime_of(request).alerts
    changed = await run_in_threadpool(alerts.update, key.tenant, alert_id, body)
    return json_response({"alert": changed})


@router.delete("/v1/alerts/{alert_id}")
async def delete_alert(request: Request, key: AdminKey, alert_id: str) -> Response:
    await run_in_threadpool(runtime_of(request).alerts.delete, key.tenant, alert_id)
    return json_response({"alert": {"id": alert_id}})


@router.get("/v1/alerts/{alert_id}/checks")
async def list_checks(
    request: Request,
    key: AdminKey,
    alert_id: str,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    before: Annotated[int | None, Query(ge=0, le=2**53, description="unix ms")] = None,
) -> Response:
    """The alert's checks, newest first (``before``: only those checked before, unix ms)."""
    alerts = runtime_of(request).alerts
    found = await run_in_threadpool(alerts.checks, key.tenant, alert_id, limit, before)
    return json_response({"checks": found})


@router.post("/v1/alerts/{alert_id}/test")
async def test_alert(request: Request, key: AdminKey, alert_id: str) -> Response:
    """Send a test notification to every destination; the outcome of each."""
    sent = await runtime_of(request).alerts.send_test_waiting(key.tenant, alert_id)
    return json_response({"notifications": sent})
