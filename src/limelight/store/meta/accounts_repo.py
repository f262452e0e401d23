"""Users, workspace memberships, console sessions and what a session's next page shows
once. Sessions come from ``MetaDB.session``."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, delete, select
from sqlalchemy.orm import Session

from limelight.errors import BadRequest, Conflict, NotFound
from limelight.ids import new_id
from limelight.store.meta.accounts_models import ConsoleSession, Membership, ShownOnce, User
from limelight.store.meta.models import Environment, Workspace


def normalise_email(email: str) -> str:
    email = email.strip().lower()
    local, at, domain = email.partition("@")
    if not (local and at and domain) or len(email) > 254 or any(c.isspace() for c in email):
        raise BadRequest(f"{email!r} is not an email address")
    return email


def create_user(s: Session, email: str, password_hash: str, now: datetime) -> User:
    email = normalise_email(email)
    if user_by_email(s, email) is not None:
        raise Conflict(f"a user with email {email!r} exists")
    user = User(id=new_id(), email=email, password_hash=password_hash, created_at=now)
    s.add(user)
    s.flush()
    return user


def user_by_email(s: Session, email: str) -> User | None:
    return s.scalar(select(User).where(User.email == email.strip().lower()))


def find_user(s: Session, ref: str) -> User:
    """By id or by email."""
    user = s.get(User, ref) or user_by_email(s, ref)
    if user is None:
        raise NotFound(f"no user {ref!r}")
    return user


def list_users(s: Session) -> list[User]:
    return list(s.scalars(select(User).order_by(User.created_at)))


def add_member(s: Session, user: User, workspace: Workspace, now: datetime) -> bool:
    """Idempotent; True when the membership is new."""
    if s.get(Membership, (user.id, workspace.id)) is not None:
        return False
    s.add(Membership(user_id=user.id, workspace_id=workspace.id, created_at=now))
    s.flush()
    return True


def workspaces_of(s: Session, user_id: str) -> list[Workspace]:
    return list(
        s.scalars(
            select(Workspace)
            .join(Membership, Membership.workspace_id == Workspace.id)
            .where(Membership.user_id == user_id)
            .order_by(Workspace.name)
        )
    )


def first_member(s: Session, workspace_id: str) -> User | None:
    """The workspace's earliest member (the one who set it up, as a rule), or None."""
    return s.scalar(
        select(User)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.workspace_id == workspace_id)
        .order_by(Membership.created_at, Membership.user_id)
        .limit(1)
    )


def environments_of(s: Session, user_id: str) -> list[tuple[Workspace, Environment]]:
    """Every environment of the workspaces the user belongs to, by workspace name."""
    rows = s.execute(
        select(Workspace, Environment)
        .join(Membership, Membership.workspace_id == Workspace.id)
        .join(Environment, Environment.workspace_id == Workspace.id)
        .where(Membership.user_id == user_id)
        .order_by(Workspace.name, Environment.created_at, Environment.id)
    )
    return [(ws, env) for ws, env in rows]


def is_member(s: Session, user_id: str, workspace_id: str) -> bool:
    return s.get(Membership, (user_id, workspace_id)) is not None


def create_session(
    s: Session, user: User, token_hash: str, now: datetime, lifetime: int
) -> ConsoleSession:
    row = ConsoleSession(
        id=new_id(),
        token_hash=token_hash,
        user_id=user.id,
        created_at=now,
        expires_at=now + timedelta(seconds=lifetime),
    )
    s.add(row)
    s.flush()
    return row


def session_user(s: Session, token_hash: str, now: datetime) -> User | None:
    row = s.execute(
        select(ConsoleSession, User)
        .join(User, User.id == ConsoleSession.user_id)
        .where(ConsoleSession.token_hash == token_hash, ConsoleSession.expires_at > now)
    ).first()
    return row[1] if row else None


def set_password(s: Session, user: User, password_hash: str) -> int:
    """A new password for ``user``; its console sessions end (a password is changed when
    the old one may be known to someone else). The number of sessions ended."""
    user.password_hash = password_hash
    ended = s.execute(delete(ConsoleSession).where(ConsoleSession.user_id == user.id))
    s.flush()
    return int(getattr(ended, "rowcount", 0))


def delete_session(s: Session, token_hash: str) -> None:
    s.execute(delete(ConsoleSession).where(ConsoleSession.token_hash == token_hash))


def keep_shown_once(
    s: Session, session_hash: str, page: str, sealed: bytes, now: datetime, lifetime: int
) -> None:
    """Keep a sealed value for ``page``; every session's expired values go first."""
    s.execute(delete(ShownOnce).where(ShownOnce.expires_at <= now))
    s.add(
        ShownOnce(
            session_hash=session_hash,
            page=page,
            sealed=sealed,
            expires_at=now + timedelta(seconds=lifetime),
        )
    )
    s.flush()


def _shown_once_of(session_hash: str, page: str, now: datetime) -> tuple[ColumnElement[bool], ...]:
    return (
        ShownOnce.session_hash == session_hash,
        ShownOnce.page == page,
        ShownOnce.expires_at > now,
    )


def has_shown_once(s: Session, session_hash: str, page: str, now: datetime) -> bool:
    found = s.execute(
        select(ShownOnce.id).where(*_shown_once_of(session_hash, page, now)).limit(1)
    ).first()
    return found is not None


def take_shown_once(s: Session, session_hash: str, page: str, now: datetime) -> list[bytes]:
    """The session's sealed values for ``page``, oldest first, deleted by the same
    statement: of two requests taking them at once, one gets them and the other none."""
    rows = s.execute(
        delete(ShownOnce)
        .where(*_shown_once_of(session_hash, page, now))
        .returning(ShownOnce.id, ShownOnce.sealed)
    ).all()
    return [sealed for _, sealed in sorted(rows)]
