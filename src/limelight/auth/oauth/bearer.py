"""Bearer tokens (RFC 6750): the access token of an installation, in the header only."""

from __future__ import annotations

from datetime import datetime
from urllib.parse import parse_qsl

from limelight.auth.oauth.clients import MAX_SECRET
from limelight.auth.oauth.errors import OAuthError, invalid_token
from limelight.auth.secrets import SecretKind, hash_secret, kind_of
from limelight.store.meta import oauth_repo as repo
from limelight.store.meta.db import MetaDB


def installation_of(db: MetaDB, authorization: str | None, query: str, now: datetime) -> str:
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
    with db.session() as s:
        found = repo.active_token(s, hash_secret(value), repo.ACCESS, now)
    if found is None:
        raise invalid_token("the access token is unknown, expired or revoked")
    return found[1].id
