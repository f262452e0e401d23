"""An environment's API keys as its members manage them in the console: listed, minted,
revoked. Only an ingest key (public by design) is ever listed whole; an admin key is
listed by its prefix and last characters."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from limelight.auth.api_keys import mint_key
from limelight.errors import BadRequest, NotFound
from limelight.store.meta import repos
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import ApiKey


@dataclass(frozen=True)
class KeyRow:
    id: str
    kind: str
    name: str
    shown: str  # the whole ingest key, or an admin key's prefix and last characters
    created_at: datetime
    revoked_at: datetime | None
    for_integration: bool


def _row(key: ApiKey) -> KeyRow:
    return KeyRow(
        id=key.id,
        kind=key.kind,
        name=key.name,
        shown=key.public_value or key.display,
        created_at=key.created_at,
        revoked_at=key.revoked_at,
        for_integration=key.installation_id is not None,
    )


def key_rows(db: MetaDB, environment_id: str) -> list[KeyRow]:
    with db.session() as s:
        env = repos.find_environment(s, environment_id)
        return [_row(k) for k in repos.list_keys(s, env)]


def ingest_key_for(db: MetaDB, environment_id: str) -> str | None:
    """An ingest key of the environment to show in examples (not an integration's)."""
    with db.session() as s:
        env = repos.find_environment(s, environment_id)
        for key in repos.list_keys(s, env):
            if key.kind == "ingest" and key.revoked_at is None and not key.installation_id:
                return key.public_value
    return None


def create_key(db: MetaDB, environment_id: str, kind: str, name: str, user_id: str) -> str:
    """A new key of the environment, owned by ``user_id``; its value, to show once."""
    with db.session(immediate=True) as s:
        env = repos.find_environment(s, environment_id)
        return mint_key(s, env, kind, name, user_id=user_id).value


def revoke_key(db: MetaDB, environment_id: str, key_id: str) -> None:
    """Revoke a key of this environment (another environment's is ``NotFound``); an
    integration's key goes with its installation, not alone."""
    with db.session(immediate=True) as s:
        key = s.get(ApiKey, key_id)
        if key is None or key.environment_id != environment_id:
            raise NotFound()
        if key.installation_id:
            raise BadRequest("this key belongs to an installed integration: uninstall it instead")
        repos.revoke_key(s, key_id)
