"""A row of one tenant's by its id, for the saved queries' and the runs' repositories."""

from __future__ import annotations

from typing import TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from limelight.errors import NotFound
from limelight.store.meta.queries_models import QueryRun, SavedQuery
from limelight.tenant import Tenant

Owned = TypeVar("Owned", SavedQuery, QueryRun)


def owned(s: Session, model: type[Owned], tenant: Tenant, row_id: str, lock: bool = False) -> Owned:
    """A row of the tenant's; another tenant's row is as unknown as a missing one.

    ``lock``: held until the transaction ends (PostgreSQL; SQLite's write
    transactions already run one at a time)."""
    q = select(model).where(
        model.id == row_id,
        model.workspace_id == tenant.workspace_id,
        model.environment_id == tenant.environment_id,
    )
    row = s.scalar(q.with_for_update() if lock else q)
    if row is None:
        raise NotFound()
    return row
