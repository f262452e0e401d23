"""``/oauth/authorize``: the consent page a developer sees when installing an integration."""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.auth.oauth.authorize import (
    AuthorizeRequest,
    ErrorPage,
    ErrorRedirect,
    approve,
    check_request,
    choices,
    deny,
)
from limelight.auth.sessions import SessionUser
from limelight.console.render import error_page, origin_of, render, see_other
from limelight.console.session import current_user, form_pairs, login_redirect, sessions_of
from limelight.times import utcnow
from limelight.web.access import note_reason
from limelight.web.request import runtime_of

router = APIRouter(include_in_schema=False)


def _consent_page(
    request: Request,
    req: AuthorizeRequest,
    user: SessionUser,
    workspace_id: str | None,
    error: str | None = None,
    status: int = 200,
) -> Response:
    if error:
        note_reason(request, error)
    options = choices(runtime_of(request).meta, user.user_id)
    chosen = next((c for c in options if c.workspace.id == workspace_id), None)
    if chosen is None and options:
        chosen = options[0]
    return render(
        "consent.html",
        status,
        form_target=origin_of(req.redirect_uri),
        scripts=False,
        user=user,
        req=req,
        hidden=req.hidden_fields(),
        csrf=sessions_of(request).csrf_token(user.binding),
        choices=options,
        chosen=chosen,
        error=error,
    )


def _refused(request: Request, message: str, status: int) -> Response:
    note_reason(request, message)
    return error_page(message, status)


async def _checked(
    request: Request, pairs: Sequence[tuple[str, str]]
) -> AuthorizeRequest | Response:
    """The checked request, or the error page (or error redirect) that answers it."""
    try:
        return await run_in_threadpool(check_request, runtime_of(request).meta, pairs)
    except ErrorPage as exc:
        return _refused(request, exc.message, exc.status)
    except ErrorRedirect as exc:
        return see_other(exc.url)


@router.get("/oauth/authorize")
async def authorize(request: Request) -> Response:
    req = await _checked(request, list(request.query_params.multi_items()))
    if isinstance(req, Response):
        return req
    user = await current_user(request)
    if user is None:
        return login_redirect(request)
    workspace_id = request.query_params.get("workspace")
    return await run_in_threadpool(_consent_page, request, req, user, workspace_id)


@router.post("/oauth/authorize")
async def decide(request: Request) -> Response:
    pairs = await form_pairs(request)
    form = dict(pairs)
    req = await _checked(request, pairs)
    if isinstance(req, Response):
        return req
    user = await current_user(request)
    if user is None:
        return _refused(request, "Your login has ended: open the installation link again.", 401)
    if not sessions_of(request).csrf_ok(user.binding, form.get("csrf")):
        return _refused(request, "The form expired; open the installation link again.", 403)
    decision = form.get("decision")
    if decision == "deny":
        return see_other(deny(req))
    if decision != "approve":
        return _refused(request, "Choose Approve or Deny.", 400)
    workspace = form.get("workspace")
    environments = [v for k, v in pairs if k == "environment"]
    settings = runtime_of(request).settings
    try:
        url = await run_in_threadpool(
            lambda: approve(
                runtime_of(request).meta,
                req,
                user_id=user.user_id,
                workspace_id=workspace if isinstance(workspace, str) else "",
                environment_ids=environments,
                now=utcnow(),
                lifetime=settings.oauth_code_lifetime,
            )
        )
    except ErrorPage as exc:
        workspace_id = workspace if isinstance(workspace, str) else None
        return await run_in_threadpool(
            _consent_page, request, req, user, workspace_id, exc.message, exc.status
        )
    return see_other(url)
