"""The first page after login: the user's workspaces and environments, ingest keys,
installed integrations (and uninstalling them), and new environments."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.auth.environments import create_environment as new_environment
from limelight.auth.environments import overview
from limelight.auth.oauth.installations import uninstall as revoke_installation
from limelight.auth.sessions import SessionUser
from limelight.console.render import render, see_other
from limelight.console.route import console_router
from limelight.console.session import check_csrf, form_fields, sessions_of, signed_in
from limelight.errors import BadRequest
from limelight.times import utcnow
from limelight.web.request import runtime_of

router = console_router()
User = Annotated[SessionUser, Depends(signed_in)]


@router.get("/")
async def home(request: Request, user: User) -> Response:
    data = await run_in_threadpool(overview, runtime_of(request).meta, user.user_id)
    csrf = sessions_of(request).csrf_token(user.binding)
    return render("home.html", user=user, csrf=csrf, **data)


@router.get("/env/{environment_id}")
async def environment_root(environment_id: str) -> Response:
    return see_other(f"/env/{environment_id}/events")


@router.post("/installations/{installation_id}/uninstall")
async def uninstall(request: Request, user: User, installation_id: str) -> Response:
    check_csrf(request, user, await form_fields(request))
    meta = runtime_of(request).meta
    await run_in_threadpool(revoke_installation, meta, user.user_id, installation_id, utcnow())
    return see_other("/")


@router.post("/workspaces/{workspace_id}/environments")
async def create_environment(request: Request, user: User, workspace_id: str) -> Response:
    form = await form_fields(request)
    check_csrf(request, user, form)
    name = form.get("name", "").strip()
    if not 1 <= len(name) <= 128:
        raise BadRequest("an environment needs a name of 1 to 128 characters")
    env_id = await run_in_threadpool(
        new_environment,
        runtime_of(request).meta,
        user.user_id,
        workspace_id,
        name,
        form.get("redact") == "on",
    )
    return see_other(f"/env/{env_id}/keys")
