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
from limelight.api.openapi import FOUND, KEYED, MANAGED_ID_TAKEN, admin_only, body, error, ok
from limelight.api.queries import QUERY_ID, ManagedId
from limelight.auth.api_keys import KeyContext
from limelight.web.body import read_json
from limelight.web.problems import json_response
from limelight.web.request import runtime_of

router = APIRouter(tags=["alerts"])
AdminKey = Annotated[KeyContext, Depends(admin_key)]


ALERT_ID = "1m8a0b1c2d3e4f5g6h7"
ALERT = {
    "name": "slow checkouts",
    "query_id": QUERY_ID,
    "calculation": "P99(duration)",
    "threshold": {"operation": ">", "value": 500},
    "frequency": "1m",
    "window": "5m",
    "renotify": "1h",
    "destinations": [
        {"type": "webhook", "url": "https://ops.example.com/limelight"},
        {"type": "email", "to": ["oncall@example.com"]},
    ],
}
FULL_ALERT = {
    **ALERT,
    "id": ALERT_ID,
    "description": "",
    "enabled": True,
    "state": "OK",
    "last_checked_at": "2026-11-21T10:05:00.000Z",
    "created_at": "2026-11-21T10:00:00.000Z",
    "updated_at": "2026-11-21T10:00:00.000Z",
    "author": "1m7y0a9b8c7d6e5f4g3",
}
NOTIFICATION = {
    "type": "webhook",
    "target": "ops.example.com",
    "ok": True,
    "status": 200,
    "error": None,
    "tries": 1,
    "pending": False,
}


@router.post(
    "/v1/alerts",
    summary="Create an alert on a saved query",
    openapi_extra=admin_only(body("AlertFields", ALERT)),
    responses={
        **ok(
            "Created; `webhook_secret` is shown only here.",
            {"alert": {"id": ALERT_ID, "webhook_secret": "ll_ws_..."}},
        ),
        **KEYED,
        "409": MANAGED_ID_TAKEN,
    },
)
@router.post("/v1/alerts/", include_in_schema=False)
async def create_alert(request: Request, key: AdminKey, managed_id: ManagedId = None) -> Response:
    """Create an alert; the answer holds its id and its webhook secret (shown only here)."""
    body = await read_json(request, "alert")
    alerts = runtime_of(request).alerts
    created = await run_in_threadpool(alerts.create, key.tenant, body, key.user_id, managed_id)
    return json_response({"alert": created})


@router.get(
    "/v1/alerts",
    summary="Every alert of the environment",
    openapi_extra=admin_only(),
    responses={**ok("The alerts.", {"alerts": [FULL_ALERT]}), **KEYED},
)
@router.get("/v1/alerts/", include_in_schema=False)
async def list_alerts(request: Request, key: AdminKey) -> Response:
    alerts = runtime_of(request).alerts
    return json_response({"alerts": await run_in_threadpool(alerts.all, key.tenant)})


@router.get(
    "/v1/alerts/{alert_id}",
    summary="An alert, with its state",
    openapi_extra=admin_only(),
    responses={**ok("The alert.", {"alert": FULL_ALERT}), **FOUND},
)
async def get_alert(request: Request, key: AdminKey, alert_id: str) -> Response:
    alerts = runtime_of(request).alerts
    return json_response({"alert": await run_in_threadpool(alerts.get, key.tenant, alert_id)})


@router.put(
    "/v1/alerts/{alert_id}",
    summary="Change an alert (the fields sent)",
    openapi_extra=admin_only(body("AlertFields", {"enabled": False})),
    responses={**ok("The alert as it now is.", {"alert": FULL_ALERT}), **FOUND},
)
async def update_alert(request: Request, key: AdminKey, alert_id: str) -> Response:
    """Partial update: the fields sent replace the stored ones; the alert is checked again."""
    body = await read_json(request, "alert")
    alerts = runtime_of(request).alerts
    changed = await run_in_threadpool(alerts.update, key.tenant, alert_id, body)
    return json_response({"alert": changed})


@router.delete(
    "/v1/alerts/{alert_id}",
    summary="Delete an alert",
    openapi_extra=admin_only(),
    responses={**ok("Deleted.", {"alert": {"id": ALERT_ID}}), **FOUND},
)
async def delete_alert(request: Request, key: AdminKey, alert_id: str) -> Response:
    await run_in_threadpool(runtime_of(request).alerts.delete, key.tenant, alert_id)
    return json_response({"alert": {"id": alert_id}})


CHECK = {
    "id": "1m8b...",
    "time": 1763719500000,
    "from": 1763719200000,
    "to": 1763719500000,
    "state": "ALARM",
    "previous_state": "OK",
    "values": [{"groups": {}, "value": 612.0, "alarm": True}],
    "notifications": [NOTIFICATION],
}


@router.get(
    "/v1/alerts/{alert_id}/checks",
    summary="The alert's checks, newest first",
    openapi_extra=admin_only(),
    responses={
        **ok(
            "Each check: its time and timeframe, the value per group, the state "
            "after it, and its notifications (`pending` until their destinations answered).",
            {"checks": [CHECK]},
        ),
        **FOUND,
    },
)
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


@router.post(
    "/v1/alerts/{alert_id}/test",
    summary="Send a test notification to every destination",
    openapi_extra=admin_only(),
    responses={
        **ok("What each destination answered.", {"notifications": [NOTIFICATION]}),
        **FOUND,
        "429": error("Too many test notifications this minute."),
    },
)
async def test_alert(request: Request, key: AdminKey, alert_id: str) -> Response:
    """Send a test notification to every destination; the outcome of each."""
    sent = await runtime_of(request).alerts.send_test_waiting(key.tenant, alert_id)
    return json_response({"notifications": sent})
