"""Console pages: login, logout, the workspaces page, uninstall, and integration logos."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response

from limelight.api.body import read_body
from limelight.api.deps import client_ip, runtime_of
from limelight.auth.sessions import (
    LOGIN_COOKIE,
    SESSION_COOKIE,
    LoginFailed,
    Sessions,
    SessionUser,
    login_binding,
    new_login_cookie,
)
from limelight.console.render import (
    HERE,
    error_page,
    is_https,
    render,
    safe_next,
    see_other,
)
from limelight.errors import BadRequest, RateLimited
from limelight.store.meta import accounts_repo as accounts
from limelight.store.meta import oauth_repo, repos
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow

router = APIRouter(include_in_schema=False)


def sessions_of(request: Request) -> Sessions:
    sessions: Sessions = request.app.state.sessions
    return sessions


async def current_user(request: Request) -> SessionUser | None:
    return await run_in_threadpool(sessions_of(request).user, request.cookies.get(SESSION_COOKIE))


# The console's forms are a few short fields; the login and consent forms are
# reachable before signing in, so a body is read within this bound.
MAX_FORM_BYTES = 64 * 1024
MAX_FORM_FIELDS = 200


async def form_pairs(request: Request) -> list[tuple[str, str]]:
    """The fields of a URL-encoded form, in order; 413 past MAX_FORM_BYTES."""
    body = await read_body(request, MAX_FORM_BYTES)
    try:
        return parse_qsl(
            body.decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=MAX_FORM_FIELDS
        )
    except ValueError as exc:
        raise BadRequest("the form has too many fields") from exc


async def form_fields(request: Request) -> dict[str, str]:
    return dict(await form_pairs(request))


def login_redirect(request: Request) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return see_other(f"/login?{urlencode({'next': target})}")


# -- login and logout -------------------------------------------------------------------


def _login_page(
    request: Request, next_url: str, error: str | None = None, status: int = 200, email: str = ""
) -> Response:
    sessions = sessions_of(request)
    cookie = request.cookies.get(LOGIN_COOKIE) or new_login_cookie()
    binding = login_binding(cookie)
    assert binding is not None
    response = render(
        "login.html",
        status,
        user=None,
        csrf=sessions.csrf_token(binding),
        next=next_url,
        error=error,
        email=email,
    )
    secure = is_https(request, runtime_of(request).settings)
    response.set_cookie(
        LOGIN_COOKIE, cookie, httponly=True, samesite="lax", secure=secure, path="/login"
    )
    return response


@router.get("/login")
async def login_form(request: Request, next: str | None = None) -> Response:
    if await current_user(request) is not None:
        return see_other(safe_next(next))
    return _login_page(request, safe_next(next))


@router.post("/login")
async def login(request: Request) -> Response:
    sessions = sessions_of(request)
    fields = await form_fields(request)
    next_url = safe_next(fields.get("next"))
    binding = login_binding(request.cookies.get(LOGIN_COOKIE))
    if not sessions.csrf_ok(binding, fields.get("csrf")):
        return _login_page(request, next_url, "The form expired; please try again.", 403)
    email = fields.get("email", "")
    try:
        value = await run_in_threadpool(
            sessions.login, email, fields.get("password", ""), client_ip(request)
        )
    except LoginFailed:
        return _login_page(request, next_url, "Wrong email or password.", 401, email)
    except RateLimited as exc:
        response = _login_page(request, next_url, "Too many failed logins; wait a while.", 429)
        response.headers.update(exc.headers)
        return response
    settings = runtime_of(request).settings
    response = see_other(next_url)
    response.set_cookie(
        SESSION_COOKIE,
        value,
        max_age=settings.session_lifetime,
        httponly=True,
        samesite="lax",
        secure=is_https(request, settings),
        path="/",
    )
    response.delete_cookie(LOGIN_COOKIE, path="/login")
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    user = await current_user(request)
    fields = await form_fields(request)
    if user is None:
        return see_other("/login")
    if not sessions_of(request).csrf_ok(user.binding, fields.get("csrf")):
        return error_page("The form expired; go back, reload and try again.", 403)
    await run_in_threadpool(sessions_of(request).logout, request.cookies.get(SESSION_COOKIE))
    response = see_other("/login")
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


# -- the workspaces page ----------------------------------------------------------------


@dataclass
class EnvView:
    environment: Any
    keys: list[Any]


@dataclass
class WorkspaceView:
    workspace: Any
    environments: list[EnvView]


def overview(db: MetaDB, user_id: str) -> dict[str, Any]:
    with db.session() as s:
        workspaces = []
        for ws in accounts.workspaces_of(s, user_id):
            envs = []
            for env in repos.list_environments(s, ws):
                keys = [
                    k
                    for k in repos.list_keys(s, env)
                    if k.kind == "ingest" and k.revoked_at is None
                ]
                envs.append(EnvView(env, keys))
            workspaces.append(WorkspaceView(ws, envs))
        installations = [
            {
                "id": inst.id,
                "integration": integration.name,
                "workspace": ws.name,
                "environments": [
                    g.environment_name for g in oauth_repo.granted_environments(s, inst.id)
                ],
            }
            for inst, integration, ws, _ in oauth_repo.active_installations(s, user_id=user_id)
        ]
    return {"workspaces": workspaces, "installations": installations}


@router.get("/")
async def home(request: Request) -> Response:
    user = await current_user(request)
    if user is None:
        return login_redirect(request)
    data = await run_in_threadpool(overview, runtime_of(request).meta, user.user_id)
    csrf = sessions_of(request).csrf_token(user.binding)
    return render("home.html", user=user, csrf=csrf, **data)


def _uninstall(db: MetaDB, user_id: str, installation_id: str) -> bool:
    with db.session(immediate=True) as s:
        mine = oauth_repo.active_installations(s, user_id=user_id)
        if not any(inst.id == installation_id for inst, *_ in mine):
            return False
        oauth_repo.revoke_installation(s, installation_id, utcnow())
        return True


@router.post("/installations/{installation_id}/uninstall")
async def uninstall(request: Request, installation_id: str) -> Response:
    user = await current_user(request)
    fields = await form_fields(request)
    if user is None:
        return login_redirect(request)
    if not sessions_of(request).csrf_ok(user.binding, fields.get("csrf")):
        return error_page("The form expired; go back, reload and try again.", 403)
    done = await run_in_threadpool(
        _uninstall, runtime_of(request).meta, user.user_id, installation_id
    )
    if not done:
        return error_page("No such installation of yours.", 404)
    return see_other("/")


# -- static things ----------------------------------------------------------------------


def _logo(db: MetaDB, client_id: str) -> str | None:
    with db.session() as s:
        integration = oauth_repo.get_integration(s, client_id)
        return integration.logo_svg if integration else None


@router.get("/integrations/{client_id}/logo.svg")
async def logo(request: Request, client_id: str) -> Response:
    svg = await run_in_threadpool(_logo, runtime_of(request).meta, client_id)
    if svg is None:
        return Response(status_code=404)
    # Opened directly, an SVG is a document that could run scripts on our origin:
    # the sandbox CSP forbids them (in <img> they never run anyway).
    headers = {
        "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "public, max-age=300",
    }
    return Response(svg.encode(), media_type="image/svg+xml", headers=headers)


@router.get("/console/static/console.css")
async def stylesheet() -> Response:
    return FileResponse(HERE / "static" / "console.css", media_type="text/css")
