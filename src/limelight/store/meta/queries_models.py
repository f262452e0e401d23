"""Metadata tables of the Queries API: saved queries and query runs (alerts: ``alerts_models``).

A saved query keeps its writable fields as one JSON document (the query layer
validates them; the database only stores them). Every row carries its
workspace and environment so that every lookup can be scoped to one tenant.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column

from limelight.store.meta.models import Base, UTCDateTime, utcnow


class RunStatus(StrEnum):
    """A query run is STARTED until it settles, once, as COMPLETED or FAILED."""

    STARTED = "STARTED"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"


class SavedQuery(Base):
    __tablename__ = "queries"
    __table_args__ = (Index("ix_queries_tenant", "workspace_id", "environment_id"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    environment_id: Mapped[str] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"))
    fields: Mapped[dict[str, Any]] = mapped_column(JSON)
    author: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class QueryRun(Base):
    """One execution of a query over a timeframe, with its outcome once finished."""

    __tablename__ = "query_runs"
    __table_args__ = (
        Index("ix_query_runs_tenant", "workspace_id", "environment_id"),
        Index("ix_query_runs_results", "workspace_id", "result_bytes", "finished_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    environment_id: Mapped[str] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"))
    # A run outlives the saved query it came from (its fields are copied below).
    query_id: Mapped[str | None] = mapped_column(
        ForeignKey("queries.id", ondelete="SET NULL"), nullable=True, index=True
    )
    fields: Mapped[dict[str, Any]] = mapped_column(JSON)
    from_ms: Mapped[int] = mapped_column(BigInteger)
    to_ms: Mapped[int] = mapped_column(BigInteger)
    limit: Mapped[int | None] = mapped_column(Integer, nullable=True)
    offset: Mapped[int | None] = mapped_column(Integer, nullable=True)
    granularity: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    status: Mapped[str] = mapped_column(String(16))  # a RunStatus
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The run's "data" as JSON text, kept for polling (bounded by the result size limit)
    # within the results' budget (``queries_repo.ResultBudget``).
    result: Mapped[str | None] = mapped_column(Text, nullable=True)
    result_bytes: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    # Dropped to keep the stored results within their budget: the answer says "expired".
    result_dropped: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    read_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class ResultUsage(Base):
    """The bytes of run results a workspace holds, kept with every write of a result."""

    __tablename__ = "query_result_usage"

    workspace_id: Mapped[str] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True
    )
    bytes: Mapped[int] = mapped_column(BigInteger)
