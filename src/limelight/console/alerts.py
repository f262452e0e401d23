"""Alerts: the list with each state, create and edit, a test notification, and the
history of checks charted against the threshold. Everything goes through the
alerts service the Alerts API uses, with its validation and its errors.

Creating an alert and testing it answer with a redirect to the alert's page, which
shows the new webhook secret or the test's outcome once (``auth/shown_once.py``):
reloading that page sends neither form again."""

from __future__ import annotations

import re
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight import saved_queries
from limelight.alerts.spec import OPERATIONS
from limelight.console.query_form import value_names
from limelight.console.render import render, see_other
from limelight.console.route import console_router
from limelight.console.scope import Here, Place, place_of
from limelight.console.session import check_csrf, form_fields, show_once, shown_once, signed_in
from limelight.errors import BadRequest, NotFound
from limelight.runtime import Runtime
from limelight.web.access import note_error
from limelight.web.request import runtime_of

router = console_router()
HISTORY = 200
_SPLIT = re.compile(r"[\s,;]+")


def _targets(rt: Runtime, here: Place) -> list[dict[str, Any]]:
    """The saved queries an alert can watch, each with its calculations."""
    found = []
    for query in saved_queries.all_queries(rt.meta, here.tenant):
        names = value_names(query.get("calculations") or [])
        if names:
            found.append(
                {"id": query["id"], "name": query.get("name") or query["id"], "calculations": names}
            )
    return found


def badge(alert: dict[str, Any]) -> dict[str, str]:
    """The state an alert's badge shows: its text and its CSS class (``state-<class>``).

    An alert is stored as OK from its creation, the baseline its first check compares with
    (a first check in ALARM notifies "firing"), and the Alerts API says OK with
    ``last_checked_at`` null. A page saying OK next to "not yet" claims a check that never
    ran: until the first one, the badge says so instead.
    """
    if alert.get("last_checked_at") is None:
        return {"text": "Not checked yet", "class": "pending"}
    return {"text": alert["state"], "class": alert["state"].lower()}


def _errors(exc: BadRequest) -> list[Any]:
    return exc.errors or [{"field": "alert", "message": exc.reason or exc.message}]


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def body_of(form: dict[str, str]) -> dict[str, Any]:
    """The Alerts API body the form describes (every field, so an edit replaces them all)."""
    body: dict[str, Any] = {
        "name": form.get("name", "").strip(),
        "description": form.get("description", "").strip() or None,
        "frequency": form.get("frequency", "").strip() or "1m",
        "window": form.get("window", "").strip() or None,
        "renotify": form.get("renotify", "").strip() or None,
        "enabled": form.get("enabled") == "on",
    }
    query_id, _, calculation = form.get("target", "").partition("|")
    body["query_id"] = query_id or None
    body["calculation"] = calculation or None
    value_text = form.get("value", "").strip()
    try:
        value: Any = float(value_text) if value_text else None
    except ValueError:
        value = value_text
    body["threshold"] = {"operation": form.get("operation", ">"), "value": value}
    if value is None or isinstance(value, str):
        raise BadRequest(
            message="Invalid alert",
            errors=[{"field": "threshold.value", "message": "a number is required"}],
        )
    destinations: list[dict[str, Any]] = [
        {"type": "webhook", "url": url} for url in _lines(form.get("webhooks", ""))
    ]
    destinations += [{"type": "slack", "url": url} for url in _lines(form.get("slack", ""))]
    if emails := [e for e in _SPLIT.split(form.get("emails", "")) if e]:
        destinations.append({"type": "email", "to": emails})
    body["destinations"] = destinations
    return body


def form_of(alert: dict[str, Any]) -> dict[str, str]:
    """The form's fields of a stored alert."""
    dests = alert.get("destinations") or []
    return {
        "name": alert["name"],
        "description": alert.get("description") or "",
        "target": f"{alert['query_id']}|{alert['calculation']}",
        "operation": alert["threshold"]["operation"],
        "value": str(alert["threshold"]["value"]),
        "frequency": alert["frequency"],
        "window": alert["window"],
        "renotify": alert.get("renotify") or "",
        "enabled": "on" if alert["enabled"] else "",
        "webhooks": "\n".join(d["url"] for d in dests if d["type"] == "webhook"),
        "slack": "\n".join(d["url"] for d in dests if d["type"] == "slack"),
        "emails": ", ".join(a for d in dests if d["type"] == "email" for a in d["to"]),
    }


async def _form_page(
    request: Request,
    here: Here,
    form: dict[str, str],
    alert_id: str | None = None,
    errors: list[Any] | None = None,
    status: int = 200,
) -> Response:
    targets = await run_in_threadpool(_targets, runtime_of(request), here)
    return render(
        "alert_form.html",
        status,
        here=here,
        section="alerts",
        form=form,
        alert_id=alert_id,
        targets=targets,
        operations=list(OPERATIONS),
        errors=errors or [],
    )


@router.get("/env/{environment_id}/alerts")
async def alerts_page(request: Request, here: Here) -> Response:
    rt = runtime_of(request)
    alerts = await run_in_threadpool(rt.alerts.all, here.tenant)
    names = {q["id"]: q.get("name") for q in await run_in_threadpool(_targets, rt, here)}
    for alert in alerts:
        alert["badge"] = badge(alert)
    return render("alerts.html", here=here, section="alerts", alerts=alerts, query_names=names)


@router.get("/env/{environment_id}/alerts/new")
async def new_alert(request: Request, here: Here) -> Response:
    form = {"frequency": "1m", "window": "5m", "operation": ">", "enabled": "on"}
    if query_id := request.query_params.get("query"):
        form["target"] = query_id
    return await _form_page(request, here, form)


@router.post("/env/{environment_id}/alerts")
async def create_alert(request: Request, here: Here) -> Response:
    form = await form_fields(request)
    check_csrf(request, here.user, form)
    rt = runtime_of(request)
    try:
        body = body_of(form)
        created = await run_in_threadpool(rt.alerts.create, here.tenant, body, here.user.user_id)
    except BadRequest as exc:
        note_error(request, exc)
        return await _form_page(request, here, form, None, _errors(exc), 400)
    page = f"{here.base}/alerts/{created['id']}"
    await show_once(request, page, {"webhook_secret": created["webhook_secret"]})
    return see_other(page)


@router.get("/env/{environment_id}/alerts/{alert_id}/edit")
async def edit_alert(request: Request, here: Here, alert_id: str) -> Response:
    alert = await run_in_threadpool(runtime_of(request).alerts.get, here.tenant, alert_id)
    return await _form_page(request, here, form_of(alert), alert_id)


@router.post("/env/{environment_id}/alerts/{alert_id}")
async def update_alert(request: Request, here: Here, alert_id: str) -> Response:
    form = await form_fields(request)
    check_csrf(request, here.user, form)
    rt = runtime_of(request)
    try:
        body = body_of(form)
        await run_in_threadpool(rt.alerts.update, here.tenant, alert_id, body)
    except BadRequest as exc:
        note_error(request, exc)
        return await _form_page(request, here, form, alert_id, _errors(exc), 400)
    return see_other(f"{here.base}/alerts/{alert_id}")


def _chart(alert: dict[str, Any], checks: list[dict[str, Any]]) -> dict[str, Any]:
    """Check times, one line per group of values, and the threshold, oldest first."""
    ordered = list(reversed(checks))
    labels: list[str] = []
    for check in ordered:
        for value in check["values"]:
            label = (
                ", ".join(f"{k}={v}" for k, v in value["groups"].items()) or alert["calculation"]
            )
            if label not in labels:
                labels.append(label)
    lines = {label: [None] * len(ordered) for label in labels}
    for i, check in enumerate(ordered):
        for value in check["values"]:
            label = (
                ", ".join(f"{k}={v}" for k, v in value["groups"].items()) or alert["calculation"]
            )
            lines[label][i] = value["value"]
    return {
        "times": [c["time"] for c in ordered],
        "series": [{"label": label, "values": values} for label, values in lines.items()],
        "threshold": alert["threshold"]["value"],
        "calculation": alert["calculation"],
    }


@router.get("/env/{environment_id}/alerts/{alert_id}")
async def alert_page(request: Request, here: Here, alert_id: str) -> Response:
    """The alert, and what this session's forms just left for it: the new alert's webhook
    secret, a test's outcome (each shown this once)."""
    rt = runtime_of(request)
    alert = await run_in_threadpool(rt.alerts.get, here.tenant, alert_id)
    secret: str | None = None
    sent: list[dict[str, Any]] | None = None
    for kept in await shown_once(request, f"{here.base}/alerts/{alert_id}"):
        secret = kept.get("webhook_secret", secret)
        sent = kept.get("sent", sent)
    checks = await run_in_threadpool(rt.alerts.checks, here.tenant, alert_id, HISTORY, None)
    return render(
        "alert.html",
        here=here,
        section="alerts",
        alert=alert,
        badge=badge(alert),
        checks=checks,
        chart=_chart(alert, checks),
        secret=secret,
        sent=sent,
    )


@router.post("/env/{environment_id}/alerts/{alert_id}/test")
async def test_alert(request: Request, here: Here, alert_id: str) -> Response:
    """To the alert's page, which shows the outcome of the test notification to each
    destination."""
    check_csrf(request, here.user, await form_fields(request))
    rt = runtime_of(request)
    sent = await run_in_threadpool(rt.alerts.send_test, here.tenant, alert_id)
    page = f"{here.base}/alerts/{alert_id}"
    await show_once(request, page, {"sent": sent})
    return see_other(page)


@router.post("/env/{environment_id}/alerts/{alert_id}/delete")
async def delete_alert(request: Request, here: Here, alert_id: str) -> Response:
    check_csrf(request, here.user, await form_fields(request))
    await run_in_threadpool(runtime_of(request).alerts.delete, here.tenant, alert_id)
    return see_other(f"{here.base}/alerts")


@router.get("/alerts/{alert_id}")
async def alert_link(request: Request, alert_id: str) -> Response:
    """The link notifications carry: the alert's page, for a member of its workspace."""
    user = await signed_in(request)
    try:
        env_id = await run_in_threadpool(runtime_of(request).alerts.environment_of, alert_id)
    except NotFound:
        raise NotFound() from None  # without the id in the message: any unknown alert alike
    here = await place_of(request, user, env_id)  # 404 for anyone else
    return see_other(f"{here.base}/alerts/{alert_id}")
