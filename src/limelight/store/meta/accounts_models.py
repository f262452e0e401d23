"""Accounts and OAuth tables: users, memberships, console sessions, integrations,
authorization codes, installations with their granted environments, tokens.

Every secret (client secret, code, token, session) is stored as its SHA-256
only; see ``limelight.auth.secrets``.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from limelight.store.meta.models import Base, UTCDateTime, utcnow

TS = UTCDateTime()


class User(Base):
    __tablename__ = "users"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    email: Mapped[str] = mapped_column(String(254), unique=True)  # stored lower-cased
    password_hash: Mapped[str] = mapped_column(String(256))  # argon2id, PHC string
    created_at: Mapped[datetime] = mapped_column(TS, default=utcnow)


class Membership(Base):
    """A user's access to a workspace (and so to all of its environments)."""

    __tablename__ = "memberships"

    user_id: Mapped[str] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    workspace_id: Mapped[str] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    created_at: Mapped[datetime] = mapped_column(TS, default=utcnow)


class ConsoleSession(Base):
    __tablename__ = "console_sessions"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(TS, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(TS)


class ShownOnce(Base):
    """A value a console page shows once, after the form that made it: sealed under a
    key only the session's cookie gives (``limelight.auth.shown_once``), and gone with
    its session."""

    __tablename__ = "shown_once"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)  # in keeping order
    session_hash: Mapped[str] = mapped_column(
        ForeignKey("console_sessions.token_hash", ondelete="CASCADE"), index=True
    )
    page: Mapped[str] = mapped_column(String(512))
    sealed: Mapped[bytes] = mapped_column(LargeBinary)
    expires_at: Mapped[datetime] = mapped_column(TS)


class Integration(Base):
    """A registered third-party application; its id is the OAuth Client ID."""

    __tablename__ = "integrations"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(128))
    description: Mapped[str] = mapped_column(Text)
    logo_svg: Mapped[str] = mapped_column(Text)  # validated; only ever served as image/svg+xml
    redirect_url: Mapped[str] = mapped_column(String(2048))
    secret_hash: Mapped[str] = mapped_column(String(64))
    secret_display: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(TS, default=utcnow)


class AuthorizationCode(Base):
    """Bound to client, redirect, user, workspace and environments; single use."""

    __tablename__ = "oauth_codes"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    integration_id: Mapped[str] = mapped_column(
        ForeignKey("integrations.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    environment_ids: Mapped[str] = mapped_column(Text)  # JSON array
    redirect_uri: Mapped[str] = mapped_column(String(2048))
    code_challenge: Mapped[str | None] = mapped_column(String(128), nullable=True)  # S256
    created_at: Mapped[datetime] = mapped_column(TS, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(TS)
    used_at: Mapped[datetime | None] = mapped_column(TS, nullable=True)
    # The installation made when the code was exchanged: revoked if the code is replayed.
    installation_id: Mapped[str | None] = mapped_column(String(32), nullable=True)


class Installation(Base):
    """An integration installed by a user on a workspace, from one exchanged code."""

    __tablename__ = "installations"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    integration_id: Mapped[str] = mapped_column(
        ForeignKey("integrations.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(TS, default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(TS, nullable=True)


class InstallationEnvironment(Base):
    """One granted environment and the public ingest key minted for it."""

    __tablename__ = "installation_environments"

    installation_id: Mapped[str] = mapped_column(
        ForeignKey("installations.id", ondelete="CASCADE"), primary_key=True
    )
    environment_id: Mapped[str] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), primary_key=True
    )
    api_key_id: Mapped[str] = mapped_column(ForeignKey("api_keys.id", ondelete="CASCADE"))


class OAuthToken(Base):
    """An access or refresh token of one installation."""

    __tablename__ = "oauth_tokens"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[str] = mapped_column(String(16))  # "access" | "refresh"
    integration_id: Mapped[str] = mapped_column(
        ForeignKey("integrations.id", ondelete="CASCADE"), index=True
    )
    installation_id: Mapped[str] = mapped_column(
        ForeignKey("installations.id", ondelete="CASCADE"), index=True
    )
    # For an access token: the refresh token it came from (revoked with it, RFC 7009 2.1).
    refresh_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(TS, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(TS)
    last_used_at: Mapped[datetime | None] = mapped_column(TS, nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(TS, nullable=True)
