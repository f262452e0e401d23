"""The resources an ``apply`` created, under the id its folder gives each (``managed_repo``).

A row names one saved query, alert or board (the column of its kind) and goes with
it: deleting the resource, by any path, deletes the row (``ON DELETE CASCADE``),
so a key never names a resource that is gone.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from limelight.store.meta.models import Base, UTCDateTime, utcnow


class ManagedResource(Base):
    __tablename__ = "managed_resources"

    workspace_id: Mapped[str] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True
    )
    environment_id: Mapped[str] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), primary_key=True
    )
    kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    managed_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    query_id: Mapped[str | None] = mapped_column(
        ForeignKey("queries.id", ondelete="CASCADE"), nullable=True, unique=True
    )
    alert_id: Mapped[str | None] = mapped_column(
        ForeignKey("alerts.id", ondelete="CASCADE"), nullable=True, unique=True
    )
    board_id: Mapped[str | None] = mapped_column(
        ForeignKey("boards.id", ondelete="CASCADE"), nullable=True, unique=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    @property
    def resource_id(self) -> str:
        return self.query_id or self.alert_id or self.board_id or ""
