"""How long a dataset's events are kept, where it differs from the deployment's default."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from limelight.store.meta.models import Base, UTCDateTime, utcnow


class DatasetRetention(Base):
    """One dataset's retention; a dataset without a row keeps events for the default."""

    __tablename__ = "dataset_retention"

    workspace_id: Mapped[str] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True
    )
    environment_id: Mapped[str] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), primary_key=True
    )
    dataset: Mapped[str] = mapped_column(String(128), primary_key=True)
    seconds: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
