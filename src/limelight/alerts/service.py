"""Alerts as the API and the CLI see them: create, read, change, delete, history, test.

An alert watches one calculation of a saved query of its environment; the
query must keep that calculation while the alert exists (``check_query_change``)
and cannot be deleted (the query repository's 403).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from limelight.alerts.check import Notification
from limelight.alerts.destinations import DestinationPolicy, parse_networks
from limelight.alerts.messages import CheckFacts
from limelight.alerts.notify import Notifier, SmtpSettings
from limelight.alerts.spec import AlertFields, as_written, validate_alert
from limelight.auth.alert_secrets import open_delivery, open_secrets, seal_destinations
from limelight.auth.sealing import Sealer
from limelight.auth.secrets import SecretKind, new_secret
from limelight.errors import BadRequest, NotFound
from limelight.ids import new_id
from limelight.query.calculations import CALCULATIONS, value_name
from limelight.query.spec import QueryFields, validate_fields
from limelight.ratelimit import RateLimiter, WindowCounts
from limelight.settings import Settings
from limelight.store.meta import alerts_repo as repo
from limelight.store.meta import managed_repo, queries_repo
from limelight.store.meta.alerts_models import Alert, AlertCheck
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow
from limelight.tenant import Tenant
from limelight.times import format_duration, iso_utc, parse_duration

MAX_CHECKS_LISTED = 1000
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# The last millisecond a datetime holds: a ``before`` past it is no bound at all.
LATEST_MS = (datetime.max.replace(tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1)
REQUIRED = ("name", "query_id", "threshold")
DEFAULT_FREQUENCY_S = 60


def calculation_operators(fields: QueryFields) -> dict[str, str]:
    """Each name a query's calculations are answered under (``COUNT``, ``P99(duration)``,
    an alias), with its operator; a HEATMAP is no number to compare with a threshold,
    and no alert watches one."""
    return {
        value_name(c.operator, c.key, c.alias): c.operator
        for c in fields.calculations or []
        if not CALCULATIONS[c.operator].heatmap
    }


def value_names(fields: QueryFields) -> list[str]:
    return list(calculation_operators(fields))


def alert_document(alert: Alert, destinations: list[dict[str, Any]]) -> dict[str, Any]:
    """The alert as clients see it, with its ``destinations`` opened (``auth.alert_secrets``)."""
    doc: dict[str, Any] = {
        "id": alert.id,
        "name": alert.name,
        "query_id": alert.query_id,
        "calculation": alert.calculation,
        "threshold": {"operation": alert.threshold_op, "value": as_written(alert.threshold_value)},
        "frequency": format_duration(alert.frequency_s),
        "window": format_duration(alert.window_s or alert.frequency_s),
        "destinations": destinations,
        "enabled": alert.enabled,
        "state": alert.state,
        "last_checked_at": iso_utc(alert.last_checked_at),
        "created_at": iso_utc(alert.created_at),
        "updated_at": iso_utc(alert.updated_at),
        "author": alert.author,
    }
    if alert.description is not None:
        doc["description"] = alert.description
    if alert.renotify_s is not None:
        doc["renotify"] = format_duration(alert.renotify_s)
    return doc


def check_document(check: AlertCheck, sealer: Sealer) -> dict[str, Any]:
    """A check as clients see it, the targets of its notifications opened."""
    doc: dict[str, Any] = {
        "id": check.id,
        "time": int(check.time.timestamp() * 1000),
        "from": check.from_ms,
        "to": check.to_ms,
        "state": check.state,
        "previous_state": check.previous_state,
        "values": check.values,
        "notifications": [open_delivery(sealer, n) for n in check.notifications],
    }
    if check.values_omitted:
        doc["values_omitted"] = check.values_omitted
    if check.error is not None:
        doc["error"] = check.error
    return doc


def smtp_settings(settings: Settings) -> SmtpSettings:
    return SmtpSettings(
        host=settings.smtp_host,
        port=settings.smtp_port,
        user=settings.smtp_user,
        password=settings.smtp_password,
        starttls=settings.smtp_starttls,
        sender=settings.smtp_from,
    )


def destination_policy(settings: Settings) -> DestinationPolicy:
    return DestinationPolicy(parse_networks(settings.destination_allow_networks))


def notification_facts(
    alert: Alert, check: AlertCheck, kind: Notification, previous: str, console_url: str
) -> CheckFacts:
    return CheckFacts(
        kind=kind,
        alert_id=alert.id,
        alert_name=alert.name,
        alert_url=f"{console_url}/alerts/{alert.id}",
        state=check.state,
        previous_state=previous,
        check_id=check.id,
        time_ms=int(check.time.timestamp() * 1000),
        from_ms=check.from_ms,
        to_ms=check.to_ms,
        calculation=alert.calculation,
        operation=alert.threshold_op,
        threshold=alert.threshold_value,
        values=check.values,
    )


class AlertService:
    def __init__(
        self,
        settings: Settings,
        meta: MetaDB,
        notifier: Notifier | None = None,
        sealer: Sealer | None = None,
        counts: WindowCounts | None = None,
    ) -> None:
        self._meta = meta
        self.sealer = sealer or Sealer.of_settings(settings)
        self.policy = destination_policy(settings)
        self.notifier = notifier or Notifier(self.policy, smtp_settings(settings))
        self._email_ready = bool(settings.smtp_host)
        # Counted where the deployment's other limits are (runtime.shared_counts): in a
        # process's memory, each API process of the server mode let a workspace send its
        # limit again.
        self._tests = RateLimiter(
            settings.alert_tests_per_minute, 60.0, counts=counts, name="alert-tests"
        )
        self.console_url = settings.base_url

    def send_test(self, tenant: Tenant | None, alert_id: str) -> list[dict[str, Any]]:
        """Send a test notification (the shape of a real one) to every destination; the
        outcome of each. ``tenant`` None: any alert, for the operator."""
        sent = self.notifier.send(*self._test_notification(tenant, alert_id))
        return [d.to_json() for d in sent]

    async def send_test_waiting(self, tenant: Tenant, alert_id: str) -> list[dict[str, Any]]:
        """``send_test`` for the API: no thread is held while the destinations answer
        (up to 3 x 10 s each); the server's threads serve every tenant's requests."""
        test = await asyncio.to_thread(self._test_notification, tenant, alert_id)
        return [d.to_json() for d in await self.notifier.deliver(*test)]

    def _test_notification(
        self, tenant: Tenant | None, alert_id: str
    ) -> tuple[list[dict[str, Any]], CheckFacts, str]:
        """What a test notification of the alert sends, where, signed with what. A
        workspace sends ``alert_tests_per_minute`` at most (each can reach 20
        destinations, or 1,000 email recipients through the operator's server)."""
        with self._meta.session() as s:
            if tenant is None:
                alert = repo.find_alert(s, alert_id)
            else:
                alert = repo.get_alert(s, tenant, alert_id)
                self._tests.hit(tenant.workspace_id)
            s.expunge(alert)
        now = utcnow()
        to_ms = int(now.timestamp() * 1000)
        check = AlertCheck(
            id=new_id(),
            time=now,
            from_ms=to_ms - 1000 * (alert.window_s or alert.frequency_s),
            to_ms=to_ms,
            state=alert.state,
            values=[],
        )
        facts = notification_facts(alert, check, Notification.TEST, alert.state, self.console_url)
        secrets = open_secrets(self.sealer, alert)
        return secrets.destinations, facts, secrets.webhook_secret

    def environment_of(self, alert_id: str) -> str:
        """The environment an alert belongs to, whoever asks: for the link notifications
        carry, whose page then checks that the user is a member (404 otherwise)."""
        with self._meta.session() as s:
            return repo.find_alert(s, alert_id).environment_id

    def create(
        self, tenant: Tenant, body: object, author: str | None, managed_id: str | None = None
    ) -> dict[str, Any]:
        """The new alert's id and webhook secret (shown this once). ``managed_id``: the id
        a folder of resources gives it, recorded with it (``managed_repo``)."""
        if managed_id is not None:
            managed_repo.check_managed_id(managed_id)
        fields = self._validated(body)
        missing = [name for name in REQUIRED if getattr(fields, name) is None]
        if missing:
            raise BadRequest(
                message="Invalid alert",
                errors=[{"field": name, "message": "is required"} for name in missing],
            )
        now = utcnow()
        secret = new_secret(SecretKind.WEBHOOK_SECRET)
        with self._meta.session(immediate=True) as s:
            alert = Alert(
                id=new_id(),
                workspace_id=tenant.workspace_id,
                environment_id=tenant.environment_id,
                author=author,
                sealed_webhook_secret=self.sealer.seal(secret),
                state="OK",
                enabled=True,
                frequency_s=DEFAULT_FREQUENCY_S,
                sealed_destinations=seal_destinations(self.sealer, []),
                created_at=now,
                updated_at=now,
            )
            self._apply(s, tenant, alert, fields, now)
            repo.add_alert(s, alert)
            if managed_id is not None:
                managed_repo.record(s, tenant, "alert", managed_id, alert.id)
            return {"id": alert.id, "webhook_secret": secret}

    def get(self, tenant: Tenant, alert_id: str) -> dict[str, Any]:
        with self._meta.session() as s:
            return self.document(repo.get_alert(s, tenant, alert_id))

    def all(self, tenant: Tenant) -> list[dict[str, Any]]:
        with self._meta.session() as s:
            return [self.document(a) for a in repo.list_alerts(s, tenant)]

    def document(self, alert: Alert) -> dict[str, Any]:
        return alert_document(alert, open_secrets(self.sealer, alert).destinations)

    def update(self, tenant: Tenant, alert_id: str, body: object) -> dict[str, Any]:
        """A partial update: the fields sent replace the stored ones. A changed alert is
        checked again at once, with its new definition."""
        fields = self._validated(body)
        sent = fields.model_fields_set
        nulls = [n for n in REQUIRED if n in sent and getattr(fields, n) is None]
        if nulls:
            raise BadRequest(
                message="Invalid alert",
                errors=[{"field": name, "message": "may not be null"} for name in nulls],
            )
        now = utcnow()
        with self._meta.session(immediate=True) as s:
            alert = repo.get_alert(s, tenant, alert_id)
            self._apply(s, tenant, alert, fields, now)
            alert.updated_at = now
            s.flush()
            return self.document(alert)

    def delete(self, tenant: Tenant, alert_id: str) -> None:
        with self._meta.session(immediate=True) as s:
            repo.delete_alert(s, tenant, alert_id)

    def checks(
        self, tenant: Tenant, alert_id: str, limit: int, before_ms: int | None
    ) -> list[dict[str, Any]]:
        before = None
        if before_ms is not None and before_ms <= LATEST_MS:
            before = EPOCH + timedelta(milliseconds=before_ms)
        with self._meta.session() as s:
            found = repo.list_checks(s, tenant, alert_id, min(limit, MAX_CHECKS_LISTED), before)
            return [check_document(c, self.sealer) for c in found]

    # -- rules ----------------------------------------------------------------------------

    def _validated(self, body: object) -> AlertFields:
        fields = validate_alert(body, self.policy)
        if not self._email_ready:
            for i, dest in enumerate(fields.destinations or []):
                if dest.type == "email":
                    raise BadRequest(
                        message="Invalid alert",
                        errors=[
                            {
                                "field": f"destinations[{i}]",
                                "message": "email is not set up on this server "
                                "(the operator sets LIMELIGHT_SMTP_HOST)",
                            }
                        ],
                    )
        return fields

    def _apply(
        self, s: Any, tenant: Tenant, alert: Alert, fields: AlertFields, now: datetime
    ) -> None:
        """Copy the fields sent onto the alert, checking the query and the calculation."""
        sent = fields.model_fields_set
        if "query_id" in sent or "calculation" in sent:
            query_id = (fields.query_id if "query_id" in sent else None) or alert.query_id
            names = self._calculations_of(s, tenant, query_id)
            # Without a calculation named, the query's first (a new query's first too).
            calculation = fields.calculation if "calculation" in sent else None
            calculation = calculation or (alert.calculation if "query_id" not in sent else None)
            calculation = calculation or names[0]
            if calculation not in names:
                raise BadRequest(
                    message="Invalid alert",
                    errors=[
                        {
                            "field": "calculation",
                            "message": "not a calculation of the query; one of: "
                            + ", ".join(names),
                        }
                    ],
                )
            alert.query_id, alert.calculation = query_id, calculation
        if fields.name is not None:
            alert.name = fields.name.strip()
        if "description" in sent:
            alert.description = fields.description or None
        if fields.threshold is not None:
            alert.threshold_op = fields.threshold.operation
            alert.threshold_value = float(fields.threshold.value)
        if fields.frequency is not None:
            alert.frequency_s = parse_duration(fields.frequency) or alert.frequency_s
        if "window" in sent:  # none: the window follows the frequency
            alert.window_s = parse_duration(fields.window) if fields.window else None
        if "renotify" in sent:
            alert.renotify_s = parse_duration(fields.renotify) if fields.renotify else None
        if fields.destinations is not None:
            alert.sealed_destinations = seal_destinations(
                self.sealer, [d.model_dump(mode="json") for d in fields.destinations]
            )
        if fields.enabled is not None:
            alert.enabled = fields.enabled
        alert.next_check_at = now  # checked at once with what it now says

    def _calculations_of(self, s: Any, tenant: Tenant, query_id: str) -> list[str]:
        try:
            query = queries_repo.get_query(s, tenant, query_id, lock=True)
        except NotFound:
            raise BadRequest(
                message="Invalid alert",
                errors=[{"field": "query_id", "message": "no saved query with this id here"}],
            ) from None
        names = value_names(validate_fields(query.fields))
        if not names:
            raise BadRequest(
                message="Invalid alert",
                errors=[{"field": "query_id", "message": "the query has no calculation to watch"}],
            )
        return names


def check_query_change(s: Any, tenant: Tenant, query_id: str, fields: QueryFields) -> None:
    """400 naming the alert when a change of a saved query takes away what it watches."""
    names = value_names(fields)
    for alert in repo.alerts_of_query(s, tenant, query_id):
        if alert.calculation not in names:
            raise BadRequest(
                message="Invalid query",
                errors=[
                    {
                        "field": "calculations",
                        "message": f"the alert {alert.name!r} ({alert.id}) watches "
                        f"{alert.calculation!r}; change or delete that alert first",
                    }
                ],
            )
