"""Who is signed in, and the forms they send: bounded bodies, CSRF tokens, and what the
page a form redirects to shows once (what the form made, or why it was refused)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.auth.sessions import SESSION_COOKIE, Sessions, SessionUser
from limelight.auth.shown_once import ShownOnce
from limelight.console.render import see_other
from limelight.errors import BadRequest, ControlFlow, ExposedError, Forbidden
from limelight.web.access import note_error
from limelight.web.body import read_body

# The console's forms are a few short fields; the login and consent forms are
# reachable before signing in, so a body is read within this bound.
MAX_FORM_BYTES = 64 * 1024
MAX_FORM_FIELDS = 200
CSRF_HEADER = "x-csrf-token"
FORM_EXPIRED = "The form expired; go back, reload the page and try again."


class LoginRequired(ControlFlow):
    """The page needs a signed-in user: the browser is sent to the login page."""


def sessions_of(request: Request) -> Sessions:
    sessions: Sessions = request.app.state.sessions
    return sessions


async def current_user(request: Request) -> SessionUser | None:
    return await run_in_threadpool(sessions_of(request).user, request.cookies.get(SESSION_COOKIE))


async def signed_in(request: Request) -> SessionUser:
    """The signed-in user; else ``LoginRequired``."""
    user = await current_user(request)
    if user is None:
        raise LoginRequired()
    return user


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


def shown_once_of(request: Request) -> ShownOnce:
    shown_once: ShownOnce = request.app.state.shown_once
    return shown_once


async def show_once(request: Request, page: str, value: Any) -> None:
    """Keep ``value`` for this session's next view of ``page`` (the form's redirect)."""
    cookie = request.cookies.get(SESSION_COOKIE, "")
    await run_in_threadpool(shown_once_of(request).keep, cookie, page, value)


async def shown_once(request: Request, page: str) -> list[Any]:
    """What the forms of this session kept for ``page``, taken: the next view shows none."""
    cookie = request.cookies.get(SESSION_COOKIE)
    return await run_in_threadpool(shown_once_of(request).take, cookie, page)


# The statuses of a form the server refuses for a reason its page can show (not now, not
# this one, conflict). Not 404: the thing the form named is gone, and so may be the page
# the form was on.
REFUSALS = frozenset({400, 403, 409})


def is_refusal(exc: ExposedError) -> bool:
    """Whether the form's action is refused as such (an alert watches the query, the panel
    is gone): a sentence its page can say. Not an error naming fields of what was sent:
    that keeps its page naming each field, as invalid input has everywhere."""
    return exc.status in REFUSALS and not exc.errors


async def refused(
    request: Request, page: str, exc: ExposedError, back: str | None = None
) -> Response:
    """303 back to the page the refused form was on, which says why once (``refusals``).

    Answering the POST with that page itself left the browser on the form's address, so
    a reload sent the form again. ``page`` is the key the page takes its notice by (its
    path); ``back`` the address to go to when it carries more (a board's timeframe).
    """
    note_error(request, exc)
    await show_once(request, page, {"refused": exc.reason or exc.message})
    return see_other(back or page)


def refusals(kept: list[Any]) -> list[str]:
    """The reasons ``refused`` left among what a page took from ``shown_once``."""
    return [k["refused"] for k in kept if isinstance(k, dict) and "refused" in k]


def check_csrf(request: Request, user: SessionUser, form: Mapping[str, str]) -> None:
    """403 unless the form (or, for the console's scripts, a header) carries the user's
    CSRF token."""
    token = form.get("csrf") or request.headers.get(CSRF_HEADER)
    if not sessions_of(request).csrf_ok(user.binding, token):
        raise Forbidden(FORM_EXPIRED)


def login_redirect(request: Request) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return see_other(f"/login?{urlencode({'next': target})}")
