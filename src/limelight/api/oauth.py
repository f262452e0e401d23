"""``/oauth/token``, ``/oauth/revoke`` and ``/oauth/environments`` (api-spec 4.1-4.3).

Only HTTP lives here; ``limelight.auth.oauth.server`` decides. The consent
page, ``/oauth/authorize``, is part of the console.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, FastAPI
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.api.openapi import Operation, json_content, ok
from limelight.auth.oauth.requests import MAX_BODY
from limelight.auth.oauth.server import NO_STORE, HttpInput, OAuthResponse, OAuthServer
from limelight.errors import PayloadTooLarge, RequestTimeout
from limelight.runtime import Runtime
from limelight.web.access import note_reason
from limelight.web.body import read_body
from limelight.web.problems import json_response
from limelight.web.request import EVERY_METHOD, client_ip

router = APIRouter(include_in_schema=False)


def server_of(request: Request) -> OAuthServer:
    server: OAuthServer = request.app.state.oauth
    return server


def to_response(request: Request, answer: OAuthResponse) -> Response:
    if answer.status >= 400 and isinstance(answer.body, dict):
        note_reason(request, str(answer.body.get("message") or answer.body.get("error")))
    if answer.body is None:
        return Response(status_code=answer.status, headers=answer.headers)
    return json_response(answer.body, answer.status, answer.headers)


def wrong_method(allowed: str) -> Response:
    body = {"error": "invalid_request", "message": f"use {allowed}"}
    return json_response(body, 405, {**NO_STORE, "Allow": allowed})


async def http_input(request: Request) -> HttpInput:
    return HttpInput(
        content_type=request.headers.get("content-type"),
        # Read within the limit: an unauthenticated caller must not make the
        # server buffer an arbitrarily large body.
        body=await read_body(request, MAX_BODY),
        query=request.url.query,
        authorization=request.headers.get("authorization"),
        client_ip=client_ip(request),
    )


async def answer_post(request: Request, handle: Callable[[HttpInput], OAuthResponse]) -> Response:
    if request.method != "POST":
        return wrong_method("POST")
    try:
        data = await http_input(request)
    except PayloadTooLarge:
        body = {"error": "invalid_request", "message": "the request body is too large"}
        return json_response(body, 413, NO_STORE)
    except RequestTimeout as exc:
        body = {"error": "invalid_request", "message": str(exc)}
        return json_response(body, 408, {**NO_STORE, **exc.headers})
    return to_response(request, await run_in_threadpool(handle, data))


OAUTH_ERROR = {
    "description": "An RFC 6749 error, never cached.",
    "content": json_content({"error": "invalid_grant", "message": "the code has expired"}),
}
TOKEN_REQUEST = {
    "grantType": "authorization_code",
    "clientId": "CLIENT_ID",
    "clientSecret": "ll_cs_...",
    "code": "ll_ac_...",
    "redirect": "https://acme.example/oauth/callback",
}
TOKENS = {
    "accessToken": "ll_at_...",
    "refreshToken": "ll_rt_...",
    "expiresIn": 86400,
    "tokenType": "Bearer",
}
REVOCATION = {"clientId": "CLIENT_ID", "clientSecret": "ll_cs_...", "token": "ll_rt_..."}
GRANTED = [{"workspaceId": "1m7y...", "environmentId": "1m7y...", "apiKey": "ll_pk_..."}]

# Routes of any method (answering 405 but one), which FastAPI cannot describe: their
# operations, for ``openapi_document``.
OPERATIONS: dict[tuple[str, str], Operation] = {
    ("/oauth/token", "post"): {
        "tags": ["oauth"],
        "summary": "Exchange a code, or refresh an access token",
        "description": "The contract's JSON with camelCase names, or the standard "
        "form-encoded request (client authentication by HTTP Basic or in the body), each "
        "answered in its own naming.",
        "requestBody": {
            "required": True,
            "content": {
                **json_content(TOKEN_REQUEST),
                "application/x-www-form-urlencoded": {"schema": {"type": "object"}},
            },
        },
        "responses": {
            **ok("Tokens.", TOKENS),
            "400": OAUTH_ERROR,
            "401": OAUTH_ERROR,
            "429": OAUTH_ERROR,
        },
    },
    ("/oauth/revoke", "post"): {
        "tags": ["oauth"],
        "summary": "Revoke a token (RFC 7009)",
        "requestBody": {"required": True, "content": json_content(REVOCATION)},
        "responses": {
            "200": {"description": "Always, also for an unknown token."},
            "401": OAUTH_ERROR,
        },
    },
    ("/oauth/environments", "get"): {
        "tags": ["oauth"],
        "summary": "The environments the installation was granted, with an ingest key each",
        "security": [{"accessToken": []}],
        "responses": {
            **ok("One ingest key per environment, the same on every call.", GRANTED),
            "401": {"description": "An expired, revoked or malformed token."},
        },
    },
}


@router.api_route("/oauth/token", methods=EVERY_METHOD)
async def token(request: Request) -> Response:
    return await answer_post(request, server_of(request).token)


@router.api_route("/oauth/revoke", methods=EVERY_METHOD)
async def revoke(request: Request) -> Response:
    return await answer_post(request, server_of(request).revoke)


@router.api_route("/oauth/environments", methods=EVERY_METHOD)
async def environments(request: Request) -> Response:
    if request.method != "GET":
        return wrong_method("GET")
    answer = await run_in_threadpool(
        server_of(request).environments,
        request.headers.get("authorization"),
        request.url.query,
    )
    return to_response(request, answer)


def install_oauth(app: FastAPI, runtime: Runtime) -> None:
    app.state.oauth = OAuthServer(runtime.meta, runtime.settings, runtime.throttle)
    app.include_router(router)
