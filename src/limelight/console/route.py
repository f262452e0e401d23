"""The console's routes: every page answers a person, so errors become readable pages.

A domain error is shown with its message and status, never a stack trace; an
unexpected one is logged and shown as a plain apology. The console's scripts
ask for JSON (``Accept: application/json``) and get the API's error bodies.
Every answer says how long the server took (``Server-Timing``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import APIRouter
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

from limelight.console.render import error_page
from limelight.console.session import LoginRequired, login_redirect
from limelight.errors import BadRequest, ExposedError
from limelight.validation import field_errors
from limelight.web.access import note_error
from limelight.web.problems import error_body, json_response

log = logging.getLogger("limelight.console")

NOT_FOUND = "There is no such page, or it belongs to an environment you are not a member of."
INTERNAL = "Something went wrong on our side; the details are in the server's log. Try again."


def wants_json(request: Request) -> bool:
    return request.headers.get("accept", "").startswith("application/json")


def problem(request: Request, exc: ExposedError) -> Response:
    note_error(request, exc)
    if wants_json(request):
        return json_response(error_body(exc), exc.status, exc.headers)
    # A 404 names nothing of another workspace: repositories raise it without a reason
    # for an id that is not the environment's, whether it exists or not.
    message = exc.reason or (NOT_FOUND if exc.status == 404 else exc.message)
    return error_page(message, exc.status, errors=exc.errors, **exc.headers)


def invalid_address(exc: RequestValidationError) -> BadRequest:
    errors = field_errors(exc, skip=1, root="address")
    return BadRequest("the address holds a value that is not valid", errors=errors)


class ConsoleRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def page(request: Request) -> Response:
            started = time.perf_counter()
            try:
                response = await handler(request)
            except LoginRequired:
                response = login_redirect(request)
            except ExposedError as exc:
                response = problem(request, exc)
            except RequestValidationError as exc:
                response = problem(request, invalid_address(exc))
            except Exception:
                log.exception("console page %s failed", request.url.path)
                response = problem(request, ExposedError(INTERNAL))
            elapsed_ms = (time.perf_counter() - started) * 1000
            response.headers["Server-Timing"] = f"app;dur={elapsed_ms:.1f}"
            return response

        return page


def console_router() -> APIRouter:
    return APIRouter(include_in_schema=False, route_class=ConsoleRoute)
