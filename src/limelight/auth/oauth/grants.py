"""The two grants (RFC 6749 4.1 and 6), as a table: grant type -> what it issues.

An authorization code is consumed in the very transaction that installs the
integration and issues its tokens, so a failure leaves it unused; a replayed
code revokes what it was first exchanged for (RFC 6749 4.1.2).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from limelight.auth.oauth import pkce
from limelight.auth.oauth.clients import MAX_SECRET, Client
from limelight.auth.oauth.errors import invalid_grant, invalid_request
from limelight.auth.oauth.installations import install
from limelight.auth.oauth.requests import ParsedRequest
from limelight.auth.secrets import SecretKind, hash_secret, kind_of, new_secret
from limelight.errors import ControlFlow
from limelight.settings import Settings
from limelight.store.meta import oauth_repo as repo
from limelight.store.meta.accounts_models import Installation
from limelight.store.meta.db import MetaDB

Issued = dict[str, str | int]


@dataclass(frozen=True)
class GrantContext:
    db: MetaDB
    settings: Settings
    now: datetime


class _CodeNotUsable(ControlFlow):
    """The code is not this client's, or used, or expired: find out which, outside
    the failed transaction."""


def exchange_code(ctx: GrantContext, client: Client, req: ParsedRequest) -> Issued:
    code, redirect = req.get("code"), req.get("redirect")
    if code is None:
        raise invalid_request("code is required")
    if redirect is None:
        raise invalid_request("redirect is required (the redirect URL used to authorize)")
    code_hash = hash_secret(code[:MAX_SECRET])
    refresh_value = new_secret(SecretKind.REFRESH_TOKEN)
    access_value = new_secret(SecretKind.ACCESS_TOKEN)
    try:
        with ctx.db.session(immediate=True) as s:
            grant = repo.consume_code(s, code_hash, client.id, ctx.now)
            if grant is None:
                raise _CodeNotUsable()
            # Any failure from here on rolls back, so the code stays unused.
            if redirect != grant.redirect_uri:
                raise invalid_grant("redirect differs from the one used to authorize")
            _check_pkce(grant.code_challenge, req.get("code_verifier"))
            installation = install(s, grant, f"integration {client.name}", ctx.now)
            if installation is None:
                raise invalid_grant("the granted workspace or environments are gone")
            refresh = repo.issue_token(
                s,
                kind=repo.REFRESH,
                token_hash=hash_secret(refresh_value),
                installation=installation,
                now=ctx.now,
                lifetime=ctx.settings.oauth_refresh_token_lifetime,
            )
            _issue_access(ctx, s, access_value, installation, refresh.id)
    except _CodeNotUsable:
        _refuse_code(ctx, code_hash, client.id)
    return {
        "access_token": access_value,
        "refresh_token": refresh_value,
        "expires_in": ctx.settings.oauth_access_token_lifetime,
        "token_type": "Bearer",
    }


def _refuse_code(ctx: GrantContext, code_hash: str, client_id: str) -> None:
    """Say why a code cannot be used; a replayed code revokes what it was exchanged for
    (RFC 6749 4.1.2: the first exchange may have been the attacker's)."""
    with ctx.db.session(immediate=True) as s:
        code = repo.code_by_hash(s, code_hash)
        if code is None or code.integration_id != client_id:
            reason = "unknown authorization code"
        elif code.used_at is not None:
            if code.installation_id:
                repo.revoke_installation(s, code.installation_id, ctx.now)
            reason = "the code was already used; the tokens issued for it are revoked"
        else:
            reason = "the authorization code has expired"
    raise invalid_grant(reason)


def refresh(ctx: GrantContext, client: Client, req: ParsedRequest) -> Issued:
    value, redirect = req.get("refresh_token"), req.get("redirect")
    if value is None:
        raise invalid_request("refreshToken is required")
    if redirect is not None and redirect != client.redirect_url:
        raise invalid_grant("redirect differs from the integration's redirect URL")
    if kind_of(value) is not SecretKind.REFRESH_TOKEN or len(value) > MAX_SECRET:
        raise invalid_grant("not a refresh token")
    access_value = new_secret(SecretKind.ACCESS_TOKEN)
    with ctx.db.session(immediate=True) as s:
        found = repo.active_token(s, hash_secret(value), repo.REFRESH, ctx.now, lock=True)
        # Another client's token reads exactly like an unknown one (RFC 6749 6, 10.4).
        if found is None or found[0].integration_id != client.id:
            raise invalid_grant("unknown, expired or revoked refresh token")
        token, installation = found
        last = token.last_used_at or token.created_at
        if ctx.now - last > timedelta(seconds=ctx.settings.oauth_refresh_token_idle):
            raise invalid_grant("the refresh token has not been used for too long")
        token.last_used_at = ctx.now
        _issue_access(ctx, s, access_value, installation, token.id)
    return {
        "access_token": access_value,
        "expires_in": ctx.settings.oauth_access_token_lifetime,
        "token_type": "Bearer",
    }


def _issue_access(
    ctx: GrantContext, s: Session, value: str, installation: Installation, refresh_id: str
) -> None:
    repo.issue_token(
        s,
        kind=repo.ACCESS,
        token_hash=hash_secret(value),
        installation=installation,
        now=ctx.now,
        lifetime=ctx.settings.oauth_access_token_lifetime,
        refresh_id=refresh_id,
    )


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


GRANTS: Mapping[str, Callable[[GrantContext, Client, ParsedRequest], Issued]] = {
    "authorization_code": exchange_code,
    "refresh_token": refresh,
}
