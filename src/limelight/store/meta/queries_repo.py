"""Saved queries, alert references and query runs, always scoped to one tenant.

Every read takes the tenant and filters on it: a row of another workspace or
environment is reported exactly like a missing one (``NotFound``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Connection, delete, insert, inspect, select, update
from sqlalchemy.orm import Session

from limelight.errors import Forbidden, NotFound
from limelight.ids import new_id
from limelight.store.events.base import Tenant
from limelight.store.meta.models import utcnow
from limelight.store.meta.queries_models import Alert, QueryRun, SavedQuery

STARTED = "STARTED"
COMPLETED = "COMPLETED"
FAILED = "FAILED"


def create_query(
    s: Session, tenant: Tenant, fields: dict[str, Any], author: str | None
) -> SavedQuery:
    now = utcnow()
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


Owned = TypeVar("Owned", SavedQuery, QueryRun)


def _owned(s: Session, model: type[Owned], tenant: Tenant, row_id: str) -> Owned:
    """A row of the tenant's; another tenant's row is as unknown as a missing one."""
    row = s.scalar(
        select(model).where(
            model.id == row_id,
            model.workspace_id == tenant.workspace_id,
            model.environment_id == tenant.environment_id,
        )
    )
    if row is None:
        raise NotFound()
    return row


def get_query(s: Session, tenant: Tenant, query_id: str) -> SavedQuery:
    return _owned(s, SavedQuery, tenant, query_id)


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
    s: Session, tenant: Tenant, query_id: str, fields: dict[str, Any]
) -> SavedQuery:
    query = get_query(s, tenant, query_id)
    query.fields = fields
    query.updated_at = utcnow()
    s.flush()
    return query


def delete_query(s: Session, tenant: Tenant, query_id: str) -> None:
    """Delete, unless an alert uses the query (403 naming the alert)."""
    query = get_query(s, tenant, query_id)
    alert = s.scalar(select(Alert).where(Alert.query_id == query.id).order_by(Alert.created_at))
    if alert is not None:
        raise Forbidden(
            message=f"the query is used by the alert {alert.name!r} ({alert.id}); "
            "delete or change that alert first"
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


# A run's record is written twice per run, on the run's own path: as plain statements
# (not an ORM unit of work) the insert takes 0.19 ms instead of 0.40 ms on SQLite.
# (attribute, column key): a Connection binds values by column key.
_RUN_COLUMNS = tuple((attr.key, attr.columns[0].key) for attr in inspect(QueryRun).column_attrs)


def add_run(c: Connection | Session, run: QueryRun) -> QueryRun:
    """Insert ``run`` (a new, unattached record) as it stands; unset columns take their
    defaults."""
    values = {col: value for attr, col in _RUN_COLUMNS if (value := getattr(run, attr)) is not None}
    c.execute(insert(QueryRun), values)
    return run


def get_run(s: Session, tenant: Tenant, run_id: str) -> QueryRun:
    return _owned(s, QueryRun, tenant, run_id)


def finish_run(
    c: Connection | Session,
    run_id: str,
    status: str,
    *,
    error: str | None = None,
    result: str | None = None,
) -> bool:
    """Record the outcome of a run still STARTED; False when it already has one.

    The condition makes the first outcome win: a run failed for its time limit
    stays failed even if its query returns afterwards.
    """
    done = c.execute(
        update(QueryRun)
        .where(QueryRun.id == run_id, QueryRun.status == STARTED)
        .values(status=status, error=error, result=result, finished_at=utcnow())
    )
    return bool(getattr(done, "rowcount", 0))


def purge_runs(s: Session, created_before: datetime) -> int:
    """Forget runs (and their results) created before the given time."""
    done = s.execute(delete(QueryRun).where(QueryRun.created_at < created_before))
    return int(getattr(done, "rowcount", 0))
