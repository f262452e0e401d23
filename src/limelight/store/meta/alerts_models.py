"""Metadata tables of alerts: each alert on a saved query, and the history of its checks.

An alert row also carries its schedule (``next_check_at``) and the lease an
evaluator takes on it while checking it (``lease_owner``, ``lease_until``), so
that any number of evaluators share the work through the database alone.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from limelight.store.meta.models import Base, UTCDateTime, utcnow


class Alert(Base):
    __tablename__ = "alerts"
    __table_args__ = (
        Index("ix_alerts_tenant", "workspace_id", "environment_id"),
        Index("ix_alerts_due", "enabled", "next_check_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    environment_id: Mapped[str] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"))
    # RESTRICT: the database refuses to orphan an alert even if a code path forgets the check.
    query_id: Mapped[str] = mapped_column(ForeignKey("queries.id", ondelete="RESTRICT"), index=True)
    name: Mapped[str] = mapped_column(String(256))
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    calculation: Mapped[str] = mapped_column(String(256), default="COUNT")
    threshold_op: Mapped[str] = mapped_column(String(2), default=">")
    threshold_value: Mapped[float] = mapped_column(Float, default=0.0)
    frequency_s: Mapped[int] = mapped_column(Integer, default=60)
    window_s: Mapped[int | None] = mapped_column(Integer, nullable=True)  # None: the frequency
    renotify_s: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # The destinations' JSON and the webhook signing secret, each sealed with the
    # installation's secret key (``auth.sealing``): the URLs of Slack and of many
    # webhooks are credentials, and signing needs the secret itself, so neither is hashed.
    sealed_destinations: Mapped[str] = mapped_column(Text, default="")
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    author: Mapped[str | None] = mapped_column(String(32), nullable=True)
    sealed_webhook_secret: Mapped[str] = mapped_column(Text, default="")
    state: Mapped[str] = mapped_column(String(16), default="OK")
    last_checked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_notified_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # "firing" or "resolved": what people were last told, so a resolution follows a firing.
    last_notification: Mapped[str | None] = mapped_column(String(16), nullable=True)
    next_check_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class AlertCheck(Base):
    """One check of an alert: the window, the value per group, the state it led to and
    the notifications sent. (alert, window end) is unique: a check is never recorded twice."""

    __tablename__ = "alert_checks"
    __table_args__ = (
        UniqueConstraint("alert_id", "to_ms"),
        Index("ix_alert_checks_time", "alert_id", "time"),
        Index("ix_alert_checks_purge", "time"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    alert_id: Mapped[str] = mapped_column(ForeignKey("alerts.id", ondelete="CASCADE"))
    time: Mapped[datetime] = mapped_column(UTCDateTime())
    from_ms: Mapped[int] = mapped_column(BigInteger)
    to_ms: Mapped[int] = mapped_column(BigInteger)
    state: Mapped[str] = mapped_column(String(16))
    previous_state: Mapped[str] = mapped_column(String(16))
    values: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    values_omitted: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    notifications: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
