"""What a console page shows once: to the session that kept it, on its page, the first
time, and never readable from the database alone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from limelight.auth.secrets import SecretKind, hash_secret, new_secret
from limelight.auth.shown_once import ShownOnce
from limelight.store.meta import accounts_repo as accounts
from limelight.store.meta.accounts_models import ShownOnce as ShownOnceRow
from limelight.store.meta.db import MetaDB

T0 = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)
PAGE = "/env/e1/keys"


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def session_cookie(db: MetaDB, email: str) -> str:
    cookie = new_secret(SecretKind.SESSION)
    with db.session(immediate=True) as s:
        user = accounts.create_user(s, email, "not-a-hash", T0)
        accounts.create_session(s, user, hash_secret(cookie), T0, 3600)
    return cookie


def test_a_value_is_taken_once_by_its_session_on_its_page(db: MetaDB) -> None:
    mine, theirs = session_cookie(db, "a@example.com"), session_cookie(db, "b@example.com")
    shown = ShownOnce(db, Clock())
    secret = new_secret(SecretKind.ADMIN_KEY)
    shown.keep(mine, PAGE, {"key": secret})
    assert shown.take(theirs, PAGE) == []
    assert shown.take(mine, "/env/e2/keys") == []
    assert shown.take(None, PAGE) == [] and shown.take("ll_sk_forged", PAGE) == []
    assert shown.take(mine, PAGE) == [{"key": secret}]
    assert shown.take(mine, PAGE) == []


def test_the_database_holds_no_readable_value_and_a_moved_row_opens_for_nobody(
    db: MetaDB,
) -> None:
    mine, theirs = session_cookie(db, "a@example.com"), session_cookie(db, "b@example.com")
    shown = ShownOnce(db, Clock())
    secret = new_secret(SecretKind.WEBHOOK_SECRET)
    shown.keep(mine, PAGE, {"webhook_secret": secret})
    with db.session(immediate=True) as s:
        [row] = s.scalars(select(ShownOnceRow)).all()
        assert secret.encode() not in row.sealed and secret[6:].encode() not in row.sealed
        row.session_hash = hash_secret(theirs)  # a row handed to another session
    assert shown.take(theirs, PAGE) == []  # its key is the cookie of the session that kept it


def test_values_expire_and_go_with_their_session(db: MetaDB) -> None:
    clock = Clock()
    shown = ShownOnce(db, clock, lifetime=300)
    first, second = session_cookie(db, "a@example.com"), session_cookie(db, "b@example.com")
    shown.keep(first, PAGE, {"n": 1})
    shown.keep(second, PAGE, {"n": 2})
    shown.keep(second, PAGE, {"n": 3})
    with db.session() as s:
        accounts.delete_session(s, hash_secret(second))  # logout
    with db.session() as s:
        assert [r.session_hash for r in s.scalars(select(ShownOnceRow))] == [hash_secret(first)]
    clock.now = T0 + timedelta(seconds=301)
    assert shown.take(first, PAGE) == []
    shown.keep(first, PAGE, {"n": 4})  # keeping removes what expired
    with db.session() as s:
        assert len(s.scalars(select(ShownOnceRow)).all()) == 1
    assert shown.take(first, PAGE) == [{"n": 4}]


def test_several_values_for_one_page_come_oldest_first(db: MetaDB) -> None:
    cookie = session_cookie(db, "a@example.com")
    shown = ShownOnce(db, Clock())
    for n in range(3):
        shown.keep(cookie, PAGE, {"n": n})
    assert shown.take(cookie, PAGE) == [{"n": 0}, {"n": 1}, {"n": 2}]
