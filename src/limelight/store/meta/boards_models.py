"""Metadata tables of boards: a board of an environment, and its panels in order.

A panel is a row of its own rather than an item of a JSON list, so that the
database itself keeps a board from showing a query that no longer exists
(``query_id`` RESTRICT, as an alert's) and the boards showing a query are one
indexed lookup away (the saved query's delete names them).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from limelight.store.meta.models import Base, UTCDateTime, utcnow


class Board(Base):
    __tablename__ = "boards"
    __table_args__ = (Index("ix_boards_tenant", "workspace_id", "environment_id"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    environment_id: Mapped[str] = mapped_column(ForeignKey("environments.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(256))
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    author: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class BoardPanel(Base):
    """One panel: a saved query of the board's environment, drawn at ``position`` (0 first)."""

    __tablename__ = "board_panels"
    __table_args__ = (UniqueConstraint("board_id", "position"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    board_id: Mapped[str] = mapped_column(ForeignKey("boards.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    # RESTRICT: the database refuses to leave a panel without its query, whatever the code.
    query_id: Mapped[str] = mapped_column(ForeignKey("queries.id", ondelete="RESTRICT"), index=True)
    title: Mapped[str] = mapped_column(String(256), default="")
    visualization: Mapped[str] = mapped_column(String(16))
    width: Mapped[int] = mapped_column(Integer)
