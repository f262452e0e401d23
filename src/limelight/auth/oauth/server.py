"""The token, revocation and environments endpoints, free of any web framework.

Each endpoint takes what it needs from the HTTP request as plain values and
returns an ``OAuthResponse``; ``limelight.api.oauth`` does the HTTP. The work
is by RFC concern: ``clients`` (client authentication), ``grants`` (the grant
types, a table), ``revocation`` and ``bearer``; here they are put together,
and ``_answer`` is the one place their errors become responses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from limelight.auth.oauth.bearer import installation_of
from limelight.auth.oauth.clients import authenticate
from limelight.auth.oauth.errors import OAuthError, invalid_request
from limelight.auth.oauth.grants import GRANTS, GrantContext
from limelight.auth.oauth.requests import (
    REVOKE_FORM,
    REVOKE_JSON,
    TOKEN_FORM,
    TOKEN_JSON,
    Style,
    error_body,
    parse_body,
    token_body,
)
from limelight.auth.oauth.revocation import revoke
from limelight.auth.throttle import FailedAuthThrottle
from limelight.errors import RateLimited
from limelight.settings import Settings
from limelight.store.meta import oauth_repo as repo
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow

# RFC 6749 5.1: token responses MUST NOT be cached; errors neither.
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


@dataclass(frozen=True)
class OAuthResponse:
    status: int
    body: Any  # JSON value; None for an empty body
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class HttpInput:
    content_type: str | None
    body: bytes
    query: str
    authorization: str | None
    client_ip: str


def _style_guess(content_type: str | None) -> Style:
    return "form" if "x-www-form-urlencoded" in (content_type or "") else "json"


class OAuthServer:
    def __init__(
        self,
        db: MetaDB,
        settings: Settings,
        throttle: FailedAuthThrottle,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.db = db
        self.settings = settings
        self.throttle = throttle
        self.clock = clock

    def token(self, http: HttpInput) -> OAuthResponse:
        def issue(style: list[Style]) -> OAuthResponse:
            req = parse_body(http.content_type, http.body, http.query, TOKEN_JSON, TOKEN_FORM)
            style[0] = req.style
            grant_type = req.get("grant_type")
            if grant_type is None:
                raise invalid_request("grantType is required")
            grant = GRANTS.get(grant_type)
            if grant is None:
                raise OAuthError(
                    "unsupported_grant_type", f"grantType must be one of {tuple(GRANTS)}"
                )
            client = authenticate(self.db, self.throttle, req, http.authorization, http.client_ip)
            issued = grant(GrantContext(self.db, self.settings, self.clock()), client, req)
            return OAuthResponse(200, token_body(req.style, issued), dict(NO_STORE))

        return _answer(_style_guess(http.content_type), issue)

    def revoke(self, http: HttpInput) -> OAuthResponse:
        """RFC 7009: 200 whether or not the token was known."""

        def revoked(style: list[Style]) -> OAuthResponse:
            req = parse_body(http.content_type, http.body, http.query, REVOKE_JSON, REVOKE_FORM)
            style[0] = req.style
            client = authenticate(self.db, self.throttle, req, http.authorization, http.client_ip)
            revoke(self.db, client, req.get("token"), self.clock())
            return OAuthResponse(200, None, dict(NO_STORE))

        return _answer(_style_guess(http.content_type), revoked)

    def environments(self, authorization: str | None, query: str) -> OAuthResponse:
        def granted(_: list[Style]) -> OAuthResponse:
            installation_id = installation_of(self.db, authorization, query, self.clock())
            with self.db.session() as s:
                found = repo.granted_environments(s, installation_id)
            body = [
                {
                    "workspaceId": g.workspace_id,
                    "environmentId": g.environment_id,
                    "apiKey": g.api_key,
                }
                for g in found
            ]
            return OAuthResponse(200, body, dict(NO_STORE))

        return _answer("json", granted)


def _answer(style: Style, endpoint: Callable[[list[Style]], OAuthResponse]) -> OAuthResponse:
    """The endpoint's response, or its error in the RFC's shape, in the style the request
    was sent in (``endpoint`` sets it once it has read the body)."""
    styles = [style]
    try:
        return endpoint(styles)
    except OAuthError as exc:
        return OAuthResponse(exc.status, error_body(styles[0], exc), {**NO_STORE, **exc.headers})
    except RateLimited as exc:
        error = OAuthError(
            "temporarily_unavailable",
            f"too many failed authentications; retry in {exc.headers['Retry-After']} s",
            429,
            exc.headers,
        )
        return OAuthResponse(429, error_body(styles[0], error), {**NO_STORE, **exc.headers})
