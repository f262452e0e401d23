"""The web console: server-rendered pages (Jinja2) with small scripts of its own, served
by the app with everything they use (no CDN, no build step)."""

from __future__ import annotations

import inspect

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from limelight.auth.sessions import Sessions
from limelight.auth.shown_once import ShownOnce
from limelight.console import (
    alerts,
    api_docs,
    authorize,
    boards,
    builder,
    datasets,
    explorer,
    home,
    keys,
    login,
    services,
    static,
    tail,
    traces,
)
from limelight.console.render import error_page
from limelight.console.route import NOT_FOUND
from limelight.runtime import Runtime
from limelight.web.access import note_reason

# Paths of the APIs: their clients get JSON errors whatever they accept.
API_PATHS = ("/v1/", "/events/", "/otel/", "/oauth/token", "/oauth/revoke", "/oauth/environments")
WRONG_METHOD = "This address does not answer that way: follow a link or use its page's form."


# Each with its router, in the order their routes are matched.
PAGE_MODULES = (
    api_docs,
    authorize,
    login,
    home,
    static,
    datasets,
    tail,  # before the explorer: /events/tail is not an event's page
    explorer,
    builder,
    boards,
    traces,
    services,
    keys,
    alerts,
)


def install_page_errors(app: FastAPI) -> None:
    """A browser asking for a page that does not exist (or with another method) gets a page
    saying so; API clients keep the JSON answer."""
    api_answer = app.exception_handlers[HTTPException]

    async def framework_http(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        page = "text/html" in request.headers.get("accept", "")
        if not page or request.url.path.startswith(API_PATHS) or exc.status_code not in (404, 405):
            answer = api_answer(request, exc)
            return await answer if inspect.isawaitable(answer) else answer
        message = NOT_FOUND if exc.status_code == 404 else WRONG_METHOD
        note_reason(request, message)
        return error_page(message, exc.status_code)

    app.add_exception_handler(HTTPException, framework_http)


def install_console(app: FastAPI, runtime: Runtime) -> None:
    """Console routes, sharing the failed-authentication limits with the OAuth endpoints."""
    app.state.sessions = Sessions(runtime.meta, runtime.settings, runtime.throttle)
    app.state.shown_once = ShownOnce(runtime.meta)
    app.state.tail_slots = tail.TailSlots()
    for module in PAGE_MODULES:
        app.include_router(module.router)
    install_page_errors(app)
