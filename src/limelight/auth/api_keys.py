"""Resolving an API key from a request to the environment it is bound to."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from limelight.auth.secrets import SecretKind, display, hash_secret, kind_of, new_secret, same_hash
from limelight.errors import Unauthorised
from limelight.ids import new_id
from limelight.store.meta import repos
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import ApiKey, Environment, utcnow
from limelight.store.meta.repos import key_by_hash
from limelight.tenant import Tenant

KEY_KINDS = {"ingest": SecretKind.INGEST_KEY, "admin": SecretKind.ADMIN_KEY}
API_KEY_KINDS = frozenset(KEY_KINDS.values())

# Anything longer is not one of our keys; checked before hashing.
MAX_KEY_LENGTH = 128


@dataclass(frozen=True, slots=True)
class KeyContext:
    key_id: str
    kind: str  # "ingest" | "admin"
    tenant: Tenant
    user_id: str | None
    redact_secrets: bool

    @property
    def is_admin(self) -> bool:
        return self.kind == "admin"

    @property
    def author(self) -> str:
        """Who the key acts for: its owner's user id, else (a key made without an owner,
        before every admin key had one) the key's own id."""
        return self.user_id or self.key_id


# Why a key is refused (the 401's ``reason``). None of them helps a guess: a value is
# "unknown" unless it is the whole 256-bit secret of a key, so only whoever held a key
# can learn that it was revoked, and the others depend on the value alone.
MISSING = "no API key: send one in the Authorization (or x-api-key) header"
NOT_A_KEY = "not an API key: API keys begin with ll_pk_ (ingest) or ll_sk_ (admin)"
UNKNOWN = "unknown API key"
REVOKED = "this API key has been revoked"


def resolve_api_key(db: MetaDB, value: str | None) -> KeyContext:
    """The key's context; ``Unauthorised`` saying whether the key is missing, not an API
    key at all, unknown or revoked.

    The lookup is by SHA-256 of the whole value (an indexed equality that says
    nothing about how close a guess was), then compared in constant time. No
    cache: a revocation takes effect on the very next request.
    """
    if not value:
        raise Unauthorised(MISSING)
    if len(value) > MAX_KEY_LENGTH or kind_of(value) not in API_KEY_KINDS:
        raise Unauthorised(NOT_A_KEY)  # an OAuth token or anything else is never an API key
    digest = hash_secret(value)
    with db.connection() as c:
        grant = key_by_hash(c, digest)
    if grant is None or not same_hash(grant.key_hash, digest):
        raise Unauthorised(UNKNOWN)
    if grant.revoked:
        raise Unauthorised(REVOKED)
    return KeyContext(
        key_id=grant.key_id,
        kind=grant.kind,
        tenant=Tenant(grant.workspace_id, grant.environment_id),
        user_id=grant.user_id,
        redact_secrets=grant.redact_secrets,
    )


@dataclass(frozen=True)
class NewKey:
    key: ApiKey
    value: str  # shown to the caller once (ingest keys stay readable)


def mint_key(
    s: Session,
    environment: Environment,
    kind: str,
    name: str = "",
    user_id: str | None = None,
    installation_id: str | None = None,
) -> NewKey:
    """A new key of ``environment``: a 256-bit secret with the kind's prefix, stored as its
    SHA-256 and a display form; an ingest key (public by design) also as itself."""
    value = new_secret(KEY_KINDS[kind])
    key = ApiKey(
        id=new_id(),
        environment_id=environment.id,
        kind=kind,
        name=name,
        key_hash=hash_secret(value),
        display=display(value),
        public_value=value if kind == "ingest" else None,
        user_id=user_id,
        installation_id=installation_id,
        created_at=utcnow(),
    )
    return NewKey(repos.add_key(s, key), value)
