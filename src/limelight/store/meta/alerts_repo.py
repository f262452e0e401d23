"""Alerts and their checks, always scoped to one tenant where a client asks; the
evaluator's claims of due alerts through a lease on the row.

A claim is one statement: on SQLite it runs under the write lock (BEGIN
IMMEDIATE), on PostgreSQL the due rows are locked with SKIP LOCKED, so two
evaluators never claim the same alert; a lease that runs out (a crashed
evaluator) makes the alert claimable again.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, case, delete, func, or_, select, update
from sqlalchemy.orm import Session

from limelight.errors import NotFound
from limelight.store.meta.alerts_models import Alert, AlertCheck
from limelight.tenant import Tenant


def _tenant_filter(tenant: Tenant) -> tuple[Any, Any]:
    return (
        Alert.workspace_id == tenant.workspace_id,
        Alert.environment_id == tenant.environment_id,
    )


def add_alert(s: Session, alert: Alert) -> Alert:
    s.add(alert)
    s.flush()
    return alert


def get_alert(s: Session, tenant: Tenant, alert_id: str) -> Alert:
    """An alert of the tenant's; another tenant's is as unknown as a missing one."""
    if "\x00" in alert_id:  # no id holds one, and PostgreSQL refuses it in a statement
        raise NotFound()
    alert = s.scalar(select(Alert).where(Alert.id == alert_id, *_tenant_filter(tenant)))
    if alert is None:
        raise NotFound()
    return alert


def find_alert(s: Session, alert_id: str) -> Alert:
    """Any tenant's alert: for the operator's command line only."""
    alert = None if "\x00" in alert_id else s.get(Alert, alert_id)
    if alert is None:
        raise NotFound(f"no alert {alert_id!r}")
    return alert


def tenant_of(alert: Alert) -> Tenant:
    return Tenant(alert.workspace_id, alert.environment_id)


def list_alerts(s: Session, tenant: Tenant | None) -> list[Alert]:
    """The tenant's alerts; every alert for the operator (``None``)."""
    q = select(Alert) if tenant is None else select(Alert).where(*_tenant_filter(tenant))
    return list(s.scalars(q.order_by(Alert.created_at, Alert.id)))


def alerts_of_query(s: Session, tenant: Tenant, query_id: str) -> list[Alert]:
    return list(
        s.scalars(
            select(Alert)
            .where(Alert.query_id == query_id, *_tenant_filter(tenant))
            .order_by(Alert.created_at, Alert.id)
        )
    )


def delete_alert(s: Session, tenant: Tenant, alert_id: str) -> None:
    s.delete(get_alert(s, tenant, alert_id))
    s.flush()


def list_checks(
    s: Session, tenant: Tenant, alert_id: str, limit: int, before: datetime | None
) -> list[AlertCheck]:
    """The alert's checks, newest first, older than ``before`` when given."""
    get_alert(s, tenant, alert_id)
    q = select(AlertCheck).where(AlertCheck.alert_id == alert_id)
    if before is not None:
        q = q.where(AlertCheck.time < before)
    return list(s.scalars(q.order_by(AlertCheck.time.desc(), AlertCheck.id.desc()).limit(limit)))


# -- the evaluator's side -----------------------------------------------------------------


def claim_due(
    c: Connection,
    owner: str,
    now: datetime,
    lease_until: datetime,
    limit: int,
    per_workspace: int = 2,
) -> list[str]:
    """Take the lease of up to ``limit`` due alerts, at most ``per_workspace`` of one
    workspace (a workspace with many slow alerts gets its turn with the others, not
    the whole round), oldest due first; their ids.

    The update re-checks that each alert is still free, so of two evaluators claiming
    at once only one gets an alert: SQLite runs the statement under its write lock,
    and PostgreSQL makes the second wait for the first's row and see its lease.
    """
    free = or_(Alert.lease_until.is_(None), Alert.lease_until < now)
    turn = (
        func.row_number()
        .over(partition_by=Alert.workspace_id, order_by=(Alert.next_check_at, Alert.id))
        .label("turn")
    )
    due = (
        select(Alert.id, Alert.next_check_at, turn)
        .where(Alert.enabled.is_(True), Alert.next_check_at <= now, free)
        .subquery()
    )
    chosen = (
        select(due.c.id)
        .where(due.c.turn <= per_workspace)
        .order_by(due.c.turn, due.c.next_check_at, due.c.id)
        .limit(limit)
    )
    claimed = c.execute(
        update(Alert)
        .where(Alert.id.in_(chosen.scalar_subquery()), free)
        .values(lease_owner=owner, lease_until=lease_until)
        .returning(Alert.id)
    )
    return [row[0] for row in claimed]


def leased_alert(s: Session, alert_id: str, owner: str) -> Alert | None:
    """The alert while ``owner`` holds its lease, else None."""
    return s.scalar(select(Alert).where(Alert.id == alert_id, Alert.lease_owner == owner))


def record_check(
    c: Connection | Session,
    check: AlertCheck,
    owner: str,
    alert_values: dict[str, Any],
    read_version: datetime,
) -> bool:
    """Store a check and the alert's new state, and release the lease; False (and
    nothing written) when ``owner`` no longer holds the lease.

    ``read_version``: the ``updated_at`` the check read. An alert changed since keeps
    the ``next_check_at`` its change set (now), so its new definition is checked at
    once rather than a frequency later."""
    values = dict(alert_values)
    if "next_check_at" in values:
        unchanged = Alert.updated_at == read_version
        values["next_check_at"] = case(
            (unchanged, values["next_check_at"]), else_=Alert.next_check_at
        )
    moved = c.execute(
        update(Alert)
        .where(Alert.id == check.alert_id, Alert.lease_owner == owner)
        .values(**values, lease_owner=None, lease_until=None)
    )
    if not getattr(moved, "rowcount", 0):
        return False
    c.execute(
        AlertCheck.__table__.insert().values(  # type: ignore[attr-defined]
            id=check.id,
            alert_id=check.alert_id,
            time=check.time,
            from_ms=check.from_ms,
            to_ms=check.to_ms,
            state=check.state,
            previous_state=check.previous_state,
            values=check.values,
            values_omitted=check.values_omitted or 0,
            error=check.error,
            notifications=check.notifications,
        )
    )
    return True


def record_deliveries(
    c: Connection | Session, check_id: str, notifications: list[dict[str, Any]]
) -> None:
    """The outcome of a check's notifications, once sent (the check recorded them pending)."""
    c.execute(
        update(AlertCheck).where(AlertCheck.id == check_id).values(notifications=notifications)
    )


def unmark_notified(
    c: Connection | Session,
    alert_id: str,
    notified_at: datetime,
    last_notification: str | None,
    last_notified_at: datetime | None,
) -> bool:
    """Put back what the alert was last told before the notification of ``notified_at``,
    which reached no destination, so that its next check sends it again; False when a
    later check has notified since (its notification stands)."""
    moved = c.execute(
        update(Alert)
        .where(Alert.id == alert_id, Alert.last_notified_at == notified_at)
        .values(last_notification=last_notification, last_notified_at=last_notified_at)
    )
    return bool(getattr(moved, "rowcount", 0))


def release(c: Connection | Session, alert_id: str, owner: str, next_check_at: datetime) -> None:
    """Give up the lease without a check; the alert is due again at ``next_check_at``."""
    c.execute(
        update(Alert)
        .where(Alert.id == alert_id, Alert.lease_owner == owner)
        .values(lease_owner=None, lease_until=None, next_check_at=next_check_at)
    )


def purge_checks(c: Connection | Session, before: datetime) -> int:
    done = c.execute(delete(AlertCheck).where(AlertCheck.time < before))
    return int(getattr(done, "rowcount", 0))
