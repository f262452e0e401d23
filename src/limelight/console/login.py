"""Signing in and out of the console."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.auth.sessions import (
    LOGIN_COOKIE,
    SESSION_COOKIE,
    LoginFailed,
    login_binding,
    new_login_cookie,
)
from limelight.console.render import is_https, render, safe_next, see_other
from limelight.console.route import console_router
from limelight.console.session import check_csrf, current_user, form_fields, sessions_of
from limelight.errors import RateLimited
from limelight.web.access import note_reason
from limelight.web.request import client_ip, runtime_of

router = console_router()


def _login_page(
    request: Request, next_url: str, error: str | None = None, status: int = 200, email: str = ""
) -> Response:
    if error:
        note_reason(request, error)
    sessions = sessions_of(request)
    cookie = request.cookies.get(LOGIN_COOKIE) or new_login_cookie()
    binding = login_binding(cookie)
    assert binding is not None
    response = render(
        "login.html",
        status,
        scripts=False,
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
    check_csrf(request, user, fields)
    await run_in_threadpool(sessions_of(request).logout, request.cookies.get(SESSION_COOKIE))
    response = see_other("/login")
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response
