"""Saved queries and the alerts that use them, always scoped to one tenant.

Every read takes the tenant and filters on it: a row of another workspace or
environment is reported exactly like a missing one (``NotFound``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from limelight.errors import Forbidden
from limelight.ids import new_id
from limelight.store.meta import boards_repo
from limelight.store.meta.alerts_models import Alert
from limelight.store.meta.models import utcnow
from limelight.store.meta.owned import owned
from limelight.store.meta.queries_models import SavedQuery
from limelight.tenant import Tenant


def create_query(
    s: Session,
    tenant: Tenant,
    fields: dict[str, Any],
    author: str | None,
    now: datetime | None = None,
) -> SavedQuery:
    now = now or utcnow()
    query = SavedQuery(
        id=new_id(),
        workspace_id=tenant.workspace_id,
        environment_id=tenant.environment_id,
        fields=fields,
        author=author,
        created_at=now,
        updated_at=now,
    )
    s.add(query)
    s.flush()
    return query


def get_query(s: Session, tenant: Tenant, query_id: str, lock: bool = False) -> SavedQuery:
    """``lock``: for a change that depends on the query as read (an alert on its
    calculations, a change of them), so that two such changes run one after the other."""
    return owned(s, SavedQuery, tenant, query_id, lock)


def list_queries(s: Session, tenant: Tenant) -> list[SavedQuery]:
    return list(
        s.scalars(
            select(SavedQuery)
            .where(
                SavedQuery.workspace_id == tenant.workspace_id,
                SavedQuery.environment_id == tenant.environment_id,
            )
            .order_by(SavedQuery.created_at, SavedQuery.id)
        )
    )


def replace_query_fields(
    s: Session,
    tenant: Tenant,
    query_id: str,
    fields: dict[str, Any],
    now: datetime | None = None,
) -> SavedQuery:
    query = get_query(s, tenant, query_id)
    query.fields = fields
    query.updated_at = now or utcnow()
    s.flush()
    return query


def delete_query(s: Session, tenant: Tenant, query_id: str) -> None:
    """Delete, unless an alert uses the query or a board shows it (403 naming them)."""
    query = get_query(s, tenant, query_id)
    alert = s.scalar(select(Alert).where(Alert.query_id == query.id).order_by(Alert.created_at))
    if alert is not None:
        raise Forbidden(
            message=f"the query is used by the alert {alert.name!r} ({alert.id}); "
            "delete or change that alert first"
        )
    if boards := boards_repo.boards_showing(s, query.id):
        names = ", ".join(f"{b.name!r} ({b.id})" for b in boards)
        raise Forbidden(
            message=f"the query is shown on the board{'s' if len(boards) > 1 else ''} {names}; "
            "remove its panels first"
        )
    s.delete(query)
    s.flush()


def add_alert_reference(s: Session, tenant: Tenant, query_id: str, name: str) -> Alert:
    """Record that an alert uses a query (the minimal row the delete check reads)."""
    query = get_query(s, tenant, query_id)
    alert = Alert(
        id=new_id(),
        workspace_id=tenant.workspace_id,
        environment_id=tenant.environment_id,
        query_id=query.id,
        name=name,
        created_at=utcnow(),
    )
    s.add(alert)
    s.flush()
    return alert
