"""A refresh racing the revocation of its refresh token, on PostgreSQL: whichever commits
first, no access token made from a revoked refresh token opens anything (RFC 7009 2.1).

On SQLite the two cannot overlap (immediate transactions take the write lock first);
on PostgreSQL they did, and an access token issued after the revocation's sweep lived
out its lifetime."""

from __future__ import annotations

import threading
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
from sqlalchemy import text

from limelight.auth.oauth.server import OAuthResponse
from limelight.auth.secrets import hash_secret
from limelight.settings import Settings
from limelight.store.meta import oauth_repo
from limelight.store.meta.db import MetaDB
from tests.unit.auth.test_grants_on_sqlite import T0, new_world

WAITING_FOR_A_LOCK = text(
    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
    " AND datname = current_database() AND query LIKE '%oauth_tokens%'"
)


@pytest.mark.parametrize("db", ["postgres"], indirect=True)
def test_a_refresh_waiting_on_a_revocation_issues_nothing(db: MetaDB, tmp_path: Path) -> None:
    world = new_world(db, Settings(data_dir=tmp_path))
    issued = world.exchange(world.code(T0))
    assert issued.status == 200
    refresh_token = issued.body["refreshToken"]

    answers: list[OAuthResponse] = []
    with ExitStack() as revoking:
        # The revocation has updated the token and not committed yet.
        s = revoking.enter_context(db.session())
        token = oauth_repo.token_by_hash(s, hash_secret(refresh_token))
        assert token is not None
        oauth_repo.revoke_token(s, token, T0)
        refreshing = threading.Thread(target=lambda: answers.append(world.refresh(refresh_token)))
        refreshing.start()
        # The refresh has reached the token and waits for the revocation's transaction.
        deadline = time.monotonic() + 30
        while True:
            with db.connection() as c:
                if c.execute(WAITING_FOR_A_LOCK).scalar_one():
                    break
            assert time.monotonic() < deadline, "the refresh never waited for the revocation"
            time.sleep(0.05)
    refreshing.join(30)
    [answer] = answers
    assert (answer.status, answer.body.get("error")) == (400, "invalid_grant")
