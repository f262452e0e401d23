"""Per-dataset retention: set and read by tenant, listed whole for the engine's job."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from limelight.store.meta.models import utcnow
from limelight.store.meta.retention_models import DatasetRetention
from limelight.tenant import Tenant


def set_retention(s: Session, tenant: Tenant, dataset: str, seconds: int | None) -> None:
    """Keep the dataset's events ``seconds``; None: back to the default."""
    key = (tenant.workspace_id, tenant.environment_id, dataset)
    row = s.get(DatasetRetention, key)
    if seconds is None:
        if row is not None:
            s.delete(row)
        return
    if row is None:
        s.add(DatasetRetention(workspace_id=key[0], environment_id=key[1], dataset=dataset,
                               seconds=seconds, updated_at=utcnow()))  # fmt: skip
    else:
        row.seconds, row.updated_at = seconds, utcnow()
    s.flush()


def retention_of(s: Session, tenant: Tenant) -> dict[str, int]:
    """The tenant's datasets that do not keep events for the default, with their seconds."""
    rows = s.scalars(
        select(DatasetRetention).where(
            DatasetRetention.workspace_id == tenant.workspace_id,
            DatasetRetention.environment_id == tenant.environment_id,
        )
    )
    return {r.dataset: r.seconds for r in rows}


def every_retention(s: Session) -> list[tuple[Tenant, str, int]]:
    """Every override of the deployment: the one reader that is not scoped to a tenant,
    for the job that applies retention to the whole events table."""
    rows = s.scalars(select(DatasetRetention).order_by(DatasetRetention.workspace_id))
    return [(Tenant(r.workspace_id, r.environment_id), r.dataset, r.seconds) for r in rows]
