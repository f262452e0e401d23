"""Token revocation (RFC 7009)."""

from __future__ import annotations

from datetime import datetime

from limelight.auth.oauth.clients import Client
from limelight.auth.oauth.errors import invalid_request
from limelight.auth.secrets import hash_secret
from limelight.store.meta import oauth_repo as repo
from limelight.store.meta.db import MetaDB


def revoke(db: MetaDB, client: Client, value: str | None, now: datetime) -> None:
    """Revoke the client's token. An unknown token, or another client's, is left alone and
    answered the same: the answer must not tell a client whether a token it does not own
    exists."""
    if value is None:
        raise invalid_request("token is required")
    with db.session(immediate=True) as s:
        token = repo.token_by_hash(s, hash_secret(value))
        if token is not None and token.integration_id == client.id:
            repo.revoke_token(s, token, now)
