"""The token, revocation and environments endpoints, free of any web framework.

Each public method takes what it needs from the HTTP request as plain values
and returns an ``OAuthResponse``; ``limelight.api.oauth`` does the HTTP.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl

from sqlalchemy.orm import Session

from limelight.auth.oauth import pkce
from limelight.auth.oauth.errors import (
    OAuthError,
    invalid_client,
    invalid_grant,
    invalid_request,
    invalid_token,
)
from limelight.auth.oauth.installations import install
from limelight.auth.oauth.requests import (
    REVOKE_FORM,
    REVOKE_JSON,
    TOKEN_FORM,
    TOKEN_JSON,
    ParsedRequest,
    Style,
    client_credentials,
    error_body,
    parse_body,
    token_body,
)
from limelight.auth.secrets import SecretKind, hash_secret, kind_of, new_secret, same_hash
from limelight.auth.throttle import FailedAuthThrottle
from limelight.errors import RateLimited
from limelight.settings import Settings
from limelight.store.meta import oauth_repo as repo
from limelight.store.meta.accounts_models import Installation
from limelight.store.meta.accounts_repo import aware
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow

# RFC 6749 5.1: token responses MUST NOT be cached; errors neither.
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
GRANT_TYPES = ("authorization_code", "refresh_token")
MAX_SECRET = 128


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


@dataclass(frozen=True)
class Client:
    id: str
    name: str
    redirect_url: str


class _CodeNotUsable(Exception):
    """The code is not this client's, or used, or expired: find out which, outside
    the failed transaction."""


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

    # -- the endpoints --------------------------------------------------------------------

    def token(self, http: HttpInput) -> OAuthResponse:
        style = _style_guess(http.content_type)
        try:
            req = parse_body(http.content_type, http.body, http.query, TOKEN_JSON, TOKEN_FORM)
            style = req.style
            grant_type = req.get("grant_type")
            if grant_type is None:
                raise invalid_request("grantType is required")
            if grant_type not in GRANT_TYPES:
                raise OAuthError(
                    "unsupported_grant_type", f"grantType must be one of {GRANT_TYPES}"
                )
            client = self._authenticate(req, http)
            if grant_type == "authorization_code":
                values = self._exchange_code(client, req)
            else:
                values = self._refresh(client, req)
        except OAuthError as exc:
            return OAuthResponse(exc.status, error_body(style, exc), {**NO_STORE, **exc.headers})
        except RateLimited as exc:
            return self._too_many(style, exc)
        return OAuthResponse(200, token_body(style, values), dict(NO_STORE))

    def revoke(self, http: HttpInput) -> OAuthResponse:
        """RFC 7009. An unknown token, or another client's, is answered 200 and left alone:
        the answer must not tell a client whether a token it does not own exists."""
        style = _style_guess(http.content_type)
        try:
            req = parse_body(http.content_type, http.body, http.query, REVOKE_JSON, REVOKE_FORM)
            style = req.style
            value = req.get("token")
            client = self._authenticate(req, http)
            if value is None:
                raise invalid_request("token is required")
            with self.db.session(immediate=True) as s:
                token = repo.token_by_hash(s, hash_secret(value))
                if token is not None and token.integration_id == client.id:
                    repo.revoke_token(s, token, self.clock())
        except OAuthError as exc:
            return OAuthResponse(exc.status, error_body(style, exc), {**NO_STORE, **exc.headers})
        except RateLimited as exc:
            return self._too_many(style, exc)
        return OAuthResponse(200, None, dict(NO_STORE))

    def environments(self, authorization: str | None, query: str) -> OAuthResponse:
        try:
            installation_id = self._bearer(authorization, query)
            with self.db.session() as s:
                granted = repo.granted_environments(s, installation_id)
        except OAuthError as exc:
            return OAuthResponse(exc.status, error_body("json", exc), {**NO_STORE, **exc.headers})
        body = [
            {"workspaceId": g.workspace_id, "environmentId": g.environment_id, "apiKey": g.api_key}
            for g in granted
        ]
        return OAuthResponse(200, body, dict(NO_STORE))

    # -- client authentication ------------------------------------------------------------

    def _authenticate(self, req: ParsedRequest, http: HttpInput) -> Client:
        creds = client_credentials(req, http.authorization)
        account = f"client:{creds.client_id[:64]}"
        attempt = self.throttle.attempt(http.client_ip, account)
        with self.db.session() as s:
            found = repo.get_integration(s, creds.client_id[:64])
            client = Client(found.id, found.name, found.redirect_url) if found else None
            stored_hash = found.secret_hash if found else hash_secret("")
        given = hash_secret(creds.client_secret[:MAX_SECRET])
        # Compare even for an unknown client, so timing says nothing about which ids exist.
        if not same_hash(stored_hash, given) or client is None:
            raise invalid_client("unknown client or wrong client secret", creds.basic)
        self.throttle.succeeded(attempt)
        return client

    def _too_many(self, style: Style, exc: RateLimited) -> OAuthResponse:
        error = OAuthError(
            "temporarily_unavailable",
            f"too many failed authentications; retry in {exc.headers['Retry-After']} s",
            429,
            exc.headers,
        )
        return OAuthResponse(429, error_body(style, error), {**NO_STORE, **exc.headers})

    # -- the two grants -------------------------------------------------------------------

    def _exchange_code(self, client: Client, req: ParsedRequest) -> dict[str, str | int]:
        code, redirect = req.get("code"), req.get("redirect")
        if code is None:
            raise invalid_request("code is required")
        if redirect is None:
            raise invalid_request("redirect is required (the redirect URL used to authorize)")
        code_hash = hash_secret(code[:MAX_SECRET])
        now = self.clock()
        refresh_value = new_secret(SecretKind.REFRESH_TOKEN)
        access_value = new_secret(SecretKind.ACCESS_TOKEN)
        try:
            with self.db.session(immediate=True) as s:
                grant = repo.consume_code(s, code_hash, client.id, now)
                if grant is None:
                    raise _CodeNotUsable()
                # Any failure from here on rolls back, so the code stays unused.
                if redirect != grant.redirect_uri:
                    raise invalid_grant("redirect differs from the one used to authorize")
                _check_pkce(grant.code_challenge, req.get("code_verifier"))
                installation = install(s, grant, f"integration {client.name}", now)
                if installation is None:
                    raise invalid_grant("the granted workspace or environments are gone")
                refresh = repo.issue_token(
                    s,
                    kind=repo.REFRESH,
                    token_hash=hash_secret(refresh_value),
                    installation=installation,
                    now=now,
                    lifetime=self.settings.oauth_refresh_token_lifetime,
                )
                self._issue_access(s, access_value, installation, refresh.id, now)
        except _CodeNotUsable:
            self._refuse_code(code_hash, client.id, now)
        return {
            "access_token": access_value,
            "refresh_token": refresh_value,
            "expires_in": self.settings.oauth_access_token_lifetime,
            "token_type": "Bearer",
        }

    def _refuse_code(self, code_hash: str, client_id: str, now: datetime) -> None:
        """Say why a code cannot be used; a replayed code revokes what it was exchanged for
        (RFC 6749 4.1.2: the first exchange may have been the attacker's)."""
        with self.db.session(immediate=True) as s:
            code = repo.code_by_hash(s, code_hash)
            if code is None or code.integration_id != client_id:
                reason = "unknown authorization code"
            elif code.used_at is not None:
                if code.installation_id:
                    repo.revoke_installation(s, code.installation_id, now)
                reason = "the code was already used; the tokens issued for it are revoked"
            else:
                reason = "the authorization code has expired"
        raise invalid_grant(reason)

    def _refresh(self, client: Client, req: ParsedRequest) -> dict[str, str | int]:
        value, redirect = req.get("refresh_token"), req.get("redirect")
        if value is None:
            raise invalid_request("refreshToken is required")
        if redirect is not None and redirect != client.redirect_url:
            raise invalid_grant("redirect differs from the integration's redirect URL")
        if kind_of(value) is not SecretKind.REFRESH_TOKEN or len(value) > MAX_SECRET:
            raise invalid_grant("not a refresh token")
        now = self.clock()
        access_value = new_secret(SecretKind.ACCESS_TOKEN)
        with self.db.session(immediate=True) as s:
            found = repo.active_token(s, hash_secret(value), repo.REFRESH, now)
            # Another client's token reads exactly like an unknown one (RFC 6749 6, 10.4).
            if found is None or found[0].integration_id != client.id:
                raise invalid_grant("unknown, expired or revoked refresh token")
            token, installation = found
            last = aware(token.last_used_at or token.created_at)
            if now - last > timedelta(seconds=self.settings.oauth_refresh_token_idle):
                raise invalid_grant("the refresh token has not been used for too long")
            token.last_used_at = now
            self._issue_access(s, access_value, installation, token.id, now)
        return {
            "access_token": access_value,
            "expires_in": self.settings.oauth_access_token_lifetime,
            "token_type": "Bearer",
        }

    def _issue_access(
        self, s: Session, value: str, installation: Installation, refresh_id: str, now: datetime
    ) -> None:
        repo.issue_token(
            s,
            kind=repo.ACCESS,
            token_hash=hash_secret(value),
            installation=installation,
            now=now,
            lifetime=self.settings.oauth_access_token_lifetime,
            refresh_id=refresh_id,
        )

    # -- bearer tokens --------------------------------------------------------------------

    def _bearer(self, authorization: str | None, query: str) -> str:
        """The installation of a valid access token, else the RFC 6750 error."""
        if any(k == "access_token" for k, _ in parse_qsl(query, keep_blank_values=True)):
            # RFC 9700 4.3.2: tokens in URLs leak through logs and referrers.
            raise OAuthError(
                "invalid_request",
                "send the access token in the Authorization header, never in the URL",
                400,
                {"WWW-Authenticate": 'Bearer realm="limelight", error="invalid_request"'},
            )
        if not authorization:
            raise OAuthError(
                "invalid_token",
                "send Authorization: Bearer <accessToken>",
                401,
                {"WWW-Authenticate": 'Bearer realm="limelight"'},
            )
        scheme, _, value = authorization.strip().partition(" ")
        value = value.strip()
        if scheme.lower() != "bearer" or not value:
            raise invalid_token("use the Bearer scheme with an access token")
        # An API key, a refresh token or anything else is never an access token.
        if kind_of(value) is not SecretKind.ACCESS_TOKEN or len(value) > MAX_SECRET:
            raise invalid_token("not an access token")
        with self.db.session() as s:
            found = repo.active_token(s, hash_secret(value), repo.ACCESS, self.clock())
        if found is None:
            raise invalid_token("the access token is unknown, expired or revoked")
        return found[1].id


def _check_pkce(challenge: str | None, verifier: str | None) -> None:
    """RFC 7636 4.6 and RFC 9700 2.1.1: a challenge forces a matching verifier, and a
    verifier without a challenge is refused (it hints at a downgrade)."""
    if challenge is None:
        if verifier is not None:
            raise invalid_request("codeVerifier given, but no code_challenge was sent")
        return
    if verifier is None:
        raise invalid_grant("codeVerifier is required: a code_challenge was sent")
    if not pkce.verifier_matches(verifier, challenge):
        raise invalid_grant("codeVerifier does not match the code_challenge")
