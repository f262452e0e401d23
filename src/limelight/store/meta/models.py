"""Metadata tables shared by every feature: workspaces, environments, API keys.

Feature-specific tables live in their own modules (``queries_models``, ...) on
the same ``Base`` so that Alembic and ``Base.metadata`` see them all.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Boolean, DateTime, ForeignKey, String, UniqueConstraint
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from limelight.times import utcnow as utcnow  # re-exported: the repositories' clock


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that always comes back aware, in UTC.

    SQLite has no time zones and returns naive values; they were written in UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    pass


class Workspace(Base):
    __tablename__ = "workspaces"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(128), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Environment(Base):
    __tablename__ = "environments"
    __table_args__ = (UniqueConstraint("workspace_id", "name"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(128))
    redact_secrets: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ApiKey(Base):
    """A key bound to one environment. Only its SHA-256 is kept, except for
    ingest keys, which are public by design and can be shown again."""

    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    environment_id: Mapped[str] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[str] = mapped_column(String(16))  # "ingest" | "admin"
    name: Mapped[str] = mapped_column(String(128), default="")
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    display: Mapped[str] = mapped_column(String(32))  # prefix and last 4 characters
    public_value: Mapped[str | None] = mapped_column(String(128), nullable=True)
    # The user who owns the key (the author of what it creates), if any.
    user_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # Set for keys minted for an OAuth installation; removed with it.
    installation_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
