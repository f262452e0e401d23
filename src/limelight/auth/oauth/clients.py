"""Client authentication (RFC 6749 2.3): the Client ID and secret, from HTTP Basic or the
body, checked in constant time and within the failed-authentication limits."""

from __future__ import annotations

from dataclasses import dataclass

from limelight.auth.oauth.errors import invalid_client
from limelight.auth.oauth.requests import ParsedRequest, client_credentials
from limelight.auth.secrets import hash_secret, same_hash
from limelight.auth.throttle import FailedAuthThrottle
from limelight.store.meta import oauth_repo as repo
from limelight.store.meta.db import MetaDB

MAX_SECRET = 128


@dataclass(frozen=True)
class Client:
    id: str
    name: str
    redirect_url: str


def authenticate(
    db: MetaDB,
    throttle: FailedAuthThrottle,
    req: ParsedRequest,
    authorization: str | None,
    client_ip: str,
) -> Client:
    """The authenticated client, else ``invalid_client`` (or ``RateLimited`` past the
    limits: the attempt is counted before the secret is checked)."""
    creds = client_credentials(req, authorization)
    attempt = throttle.attempt(client_ip, f"client:{creds.client_id[:64]}")
    with db.session() as s:
        found = repo.get_integration(s, creds.client_id[:64])
        client = Client(found.id, found.name, found.redirect_url) if found else None
        stored_hash = found.secret_hash if found else hash_secret("")
    given = hash_secret(creds.client_secret[:MAX_SECRET])
    # Compare even for an unknown client, so timing says nothing about which ids exist.
    if not same_hash(stored_hash, given) or client is None:
        raise invalid_client("unknown client or wrong client secret", creds.basic)
    throttle.succeeded(attempt)
    return client
