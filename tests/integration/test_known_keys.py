"""API keys taken from memory while the metadata database is unchanged: a revocation,
from this process or another, is still refused on the very next request."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from limelight.auth.api_keys import REVOKED, UNKNOWN, mint_key
from limelight.auth.known_keys import KnownKeys
from limelight.errors import Unauthorised
from limelight.store.meta import repos
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant


def _key(db: MetaDB, redact: bool = True) -> tuple[str, str, Tenant]:
    """A new ingest key: its value, its id and its environment."""
    with db.session(immediate=True) as s:
        ws = repos.create_workspace(s, f"ws-{uuid.uuid4().hex[:8]}")
        env = repos.create_environment(s, ws, "prod", redact=redact)
        new = mint_key(s, env, "ingest")
        return new.value, new.key.id, Tenant(ws.id, env.id)


def _revoke(db: MetaDB, key_id: str) -> None:
    with db.session(immediate=True) as s:
        repos.revoke_key(s, key_id)


def test_a_resolved_key_is_known_until_the_database_changes(db: MetaDB) -> None:
    value, _, tenant = _key(db)
    keys = KnownKeys(db)
    assert keys.known(value) is None
    resolved = keys.resolve(value)
    assert resolved.tenant == tenant
    if db.change_count() is None:  # PostgreSQL: no counter, every request reads the key
        assert keys.known(value) is None
        return
    assert keys.known(value) == resolved
    _key(db)  # any commit: the next request reads its key again
    assert keys.known(value) is None
    assert keys.resolve(value) == resolved
    assert keys.known(value) == resolved


# The CLI revokes over its own connection, in its own process.
REVOKE_ELSEWHERE = (
    "import sys; from limelight.store.meta.db import MetaDB; "
    "from limelight.store.meta import repos; db = MetaDB(sys.argv[1]); "
    "s = db.session(immediate=True).__enter__(); repos.revoke_key(s, sys.argv[2]); "
    "s.commit()"
)


@pytest.mark.parametrize("where", ["this process", "another process"])
def test_a_revoked_key_is_refused_on_the_next_request(db: MetaDB, where: str) -> None:
    value, key_id, _ = _key(db)
    keys = KnownKeys(db)
    keys.resolve(value)
    if where == "this process":
        _revoke(db, key_id)
    else:
        subprocess.run([sys.executable, "-c", REVOKE_ELSEWHERE, db.url, key_id], check=True)
    assert keys.known(value) is None
    with pytest.raises(Unauthorised) as refused:
        keys.resolve(value)
    assert refused.value.reason == REVOKED


def test_refused_keys_are_not_remembered(db: MetaDB) -> None:
    keys = KnownKeys(db)
    guess = "ll_pk_" + "a" * 43
    for _ in range(2):
        assert keys.known(guess) is None
        with pytest.raises(Unauthorised) as refused:
            keys.resolve(guess)
        assert refused.value.reason == UNKNOWN


def test_past_its_bound_the_cache_starts_over(db: MetaDB) -> None:
    if db.change_count() is None:
        pytest.skip("nothing is cached without a change counter (PostgreSQL)")
    first, _, _ = _key(db)
    second, _, _ = _key(db)
    keys = KnownKeys(db, most=1)
    keys.resolve(first)
    keys.resolve(second)
    assert keys.known(first) is None
    assert keys.known(second) is not None
