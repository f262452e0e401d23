"""The evaluator: claims due alerts, checks them, records the checks, notifies.

Any number of evaluators (the one inside ``limelight serve``, ``limelight
worker`` processes) share the work through the metadata database: a due alert
is claimed with a lease on its row (``alerts_repo.claim_due``), checked, and its
check recorded only while the lease is still held, so a check never runs
twice; a crashed evaluator's leases run out and another takes them. A check
runs the saved query over ``[now - window, now)`` with the same code and limits
as a query run. After downtime, an alert whose checks fell due meanwhile is
checked once, and its schedule continues from there: no burst of catch-ups.
A check's notification is sent apart from the checks (``delivery.py``), once the
check is recorded: a destination that never answers holds no check thread.

The clock is injected: tests move it instead of sleeping.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from limelight import metrics
from limelight.alerts.check import (
    ZERO_WHEN_EMPTY,
    AlertState,
    Notification,
    Verdict,
    judge,
    notification_due,
)
from limelight.alerts.delivery import GRACE_SECONDS, Deliveries, Outgoing
from limelight.alerts.notify import Delivery, Notifier, report
from limelight.alerts.service import (
    calculation_operators,
    destination_policy,
    notification_facts,
    smtp_settings,
)
from limelight.auth.alert_secrets import open_secrets, seal_delivery
from limelight.auth.sealing import Sealer
from limelight.errors import BadRequest, RateLimited, StoreError
from limelight.ids import new_id
from limelight.query.compile import Timeframe
from limelight.query.spec import validate_fields
from limelight.ratelimit import RateLimiter, WindowCounts
from limelight.runs.execute import RunFailed, run_once
from limelight.runs.limits import RunLimits, store_failure_message
from limelight.settings import Settings
from limelight.store.events.base import EventStore
from limelight.store.meta import alerts_repo as repo
from limelight.store.meta import queries_repo
from limelight.store.meta.alerts_models import Alert, AlertCheck
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow
from limelight.tenant import Tenant

log = logging.getLogger("limelight.alerts")

TICK_SECONDS = 1.0
# The shortest lease; a lease outlasts the checks claimed with it (``lease_for``).
LEASE = timedelta(minutes=5)
# Alerts claimed at once per thread: the last of them starts after the others' checks.
CLAIMS_PER_THREAD = 4
# Statements of a check, each within the query time limit: the lookup of the keys'
# types, the aggregates, the series.
CHECK_STATEMENTS = 3
PURGE_EVERY_TICKS = 600
# A check that failed on a fault of ours waits this long before it is tried again:
# released as due at once, the same tick would claim it again, and again.
RETRY_FAILED_CHECK = timedelta(minutes=1)
# Groups of one check kept in its history (those in alarm first).
KEPT_VALUES = 100
# Groups a grouped query's check looks at: the top ones by the query's order.
GROUPS_CHECKED = 1000


@dataclass(frozen=True)
class CheckReport:
    """What one check did, for tests and the bench."""

    alert_id: str
    state: AlertState
    notification: Notification | None
    lag_seconds: float  # from its due time to its start


class Evaluator:
    def __init__(
        self,
        settings: Settings,
        meta: MetaDB,
        events: EventStore,
        *,
        clock: Callable[[], datetime] = utcnow,
        notifier: Notifier | None = None,
        owner: str | None = None,
        counts: WindowCounts | None = None,
        sealer: Sealer | None = None,
    ) -> None:
        self._meta = meta
        self._sealer = sealer or Sealer.of_settings(settings)
        # Notifications a workspace may send a minute (each destination counts once): an
        # alert flapping every minute must not make the operator's mail server a relay.
        self._quota = RateLimiter(
            settings.alert_notifications_per_minute, 60, counts=counts, name="notifications"
        )
        self._events = events
        self._clock = clock
        self.limits = RunLimits.from_settings(settings)
        self.notifier = notifier or Notifier(destination_policy(settings), smtp_settings(settings))
        self.deliveries = Deliveries(meta, settings.alert_deliveries_per_workspace, self._sealer)
        self.lease = lease_for(self.limits)
        self.owner = owner or f"evaluator-{new_id()}"
        self.console_url = settings.base_url
        self.threads = settings.alert_threads
        self.history = timedelta(days=settings.alert_history_days)
        self._pool: ThreadPoolExecutor | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._ticks = 0

    # -- running in the background --------------------------------------------------------

    def start(self) -> None:
        """Check due alerts every second, in the background."""
        if self._thread is not None:
            return
        self.start_pool()
        self._thread = threading.Thread(target=self._loop, name="alert-evaluator", daemon=True)
        self._thread.start()

    def start_pool(self) -> None:
        """Run the checks of a ``tick`` on ``alert_threads`` threads (``start`` does this)."""
        self._stop.clear()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="alert-check")

    def close(self, grace: float = GRACE_SECONDS) -> None:
        """Stop checking; the notifications in flight get ``grace`` seconds, then those
        not sent are recorded so."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._thread = self._pool = None
        self.deliveries.close(grace)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception:
                log.exception("the alert evaluator's tick failed")
            self._stop.wait(TICK_SECONDS)

    # -- one round ------------------------------------------------------------------------

    def tick(self) -> list[CheckReport]:
        """Claim every alert due now and check them (on the pool when started)."""
        self._ticks += 1
        metrics.ALERT_EVALUATOR_ROUNDS.inc()
        if self._ticks % PURGE_EVERY_TICKS == 1:
            self._purge()
        reports: list[CheckReport] = []
        while not self._stop.is_set():
            now = self._clock()
            with self._meta.connection(immediate=True) as c:
                claimed = repo.claim_due(
                    c, self.owner, now, now + self.lease, CLAIMS_PER_THREAD * self.threads
                )
            if not claimed:
                return reports
            if self._pool is not None:
                found = self._pool.map(self.check, claimed)
            else:
                found = map(self.check, claimed)
            reports += [r for r in found if r is not None]
        return reports

    def check(self, alert_id: str) -> CheckReport | None:
        """Check one alert whose lease this evaluator holds; None when it lost the lease."""
        try:
            with metrics.ALERT_CHECK_SECONDS.time():
                report = self._check(alert_id)
        except Exception:
            log.exception("checking alert %s failed", alert_id)
            metrics.ALERT_CHECKS.labels("FAILED").inc()
            with self._meta.connection(immediate=True) as c:
                repo.release(c, alert_id, self.owner, self._clock() + RETRY_FAILED_CHECK)
            return None
        if report is not None:
            metrics.ALERT_CHECKS.labels(report.state.value).inc()
        return report

    def _check(self, alert_id: str) -> CheckReport | None:
        with self._meta.session() as s:
            alert = repo.leased_alert(s, alert_id, self.owner)
            if alert is None:
                return None
            tenant = repo.tenant_of(alert)
            query = queries_repo.get_query(s, tenant, alert.query_id)
            s.expunge(alert)
            fields = query.fields
        started = self._clock()
        due = alert.next_check_at or started
        to_ms = int(started.timestamp() * 1000)
        from_ms = to_ms - 1000 * (alert.window_s or alert.frequency_s)
        verdict, error = self._judge(alert, tenant, fields, Timeframe(from_ms, to_ms))
        previous = AlertState(alert.state)
        renotify = timedelta(seconds=alert.renotify_s) if alert.renotify_s else None
        kind = notification_due(
            verdict.state, alert.last_notification, alert.last_notified_at, renotify, started
        )
        check = AlertCheck(
            id=new_id(),
            alert_id=alert.id,
            time=started,
            from_ms=from_ms,
            to_ms=to_ms,
            state=verdict.state.value,
            previous_state=previous.value,
            values=verdict.values,
            error=error,
            notifications=[],
        )
        changes: dict[str, Any] = {
            "state": verdict.state.value,
            "last_checked_at": started,
            "next_check_at": next_due(due, alert.frequency_s, started),
        }
        outgoing = None
        if kind is not None:
            outgoing = self.notify(alert, check, kind, previous.value)
            check.notifications = [
                seal_delivery(self._sealer, d.to_json()) for d in outgoing.recorded
            ]
            if outgoing.notified_at is not None:  # else tried again at the next check
                changes |= {"last_notification": kind.value, "last_notified_at": started}
        # The history keeps the groups in alarm first, at most KEPT_VALUES of them (a
        # notification names every group): checks every minute for 30 days add up.
        kept = sorted(check.values, key=lambda v: not v.get("alarm"))[:KEPT_VALUES]
        check.values_omitted = len(check.values) - len(kept)
        check.values = kept
        admitted = len(outgoing.sending) if outgoing is not None else 0
        try:
            with self._meta.connection(immediate=True) as c:
                recorded = repo.record_check(c, check, self.owner, changes, alert.updated_at)
        except BaseException:
            self.deliveries.forgo(alert.workspace_id, admitted)
            raise
        if not recorded:  # whoever holds the lease now checks and notifies
            self.deliveries.forgo(alert.workspace_id, admitted)
            log.warning("alert %s: the lease ran out before its check was recorded", alert_id)
            return None
        if previous is not verdict.state:
            log.info(
                "alert %s of workspace %s: %s -> %s",
                alert.id,
                alert.workspace_id,
                previous.value,
                verdict.state.value,
                extra={
                    "alert_id": alert.id,
                    "workspace_id": alert.workspace_id,
                    "from_state": previous.value,
                    "to_state": verdict.state.value,
                },
            )
        if outgoing is not None and outgoing.sending:
            self.deliveries.send(outgoing)
        lag = (started - due).total_seconds()
        return CheckReport(alert.id, verdict.state, kind, lag)

    def _judge(
        self, alert: Alert, tenant: Tenant, stored: dict[str, Any], timeframe: Timeframe
    ) -> tuple[Verdict, str | None]:
        """The verdict on the query's run; ERROR with the reason when the run fails."""
        limits = self.limits
        options = limits.run_options(
            GROUPS_CHECKED,
            granularity_ms=max(1, timeframe.to_ms - timeframe.from_ms),  # one bucket
        )
        try:
            fields = validate_fields(stored)
            data = run_once(self._events, tenant, fields, timeframe, options, limits)
        except RunFailed as exc:
            return Verdict(AlertState.ERROR, []), str(exc)
        except BadRequest as exc:
            # The query asks more than a query may now (saved before a limit, or a
            # statement longer than the engine reads): what its editor would be told.
            return Verdict(AlertState.ERROR, []), _refusal(exc)
        except StoreError as exc:
            return Verdict(AlertState.ERROR, []), store_failure_message(exc, limits)
        except Exception:
            log.exception("alert %s: its query failed", alert.id)
            return Verdict(AlertState.ERROR, []), "the alert's query failed on an internal error"
        zero = calculation_operators(fields).get(alert.calculation) in ZERO_WHEN_EMPTY
        verdict = judge(data, alert.calculation, alert.threshold_op, alert.threshold_value, zero)
        return verdict, None

    def notify(
        self, alert: Alert, check: AlertCheck, kind: Notification, previous: str
    ) -> Outgoing:
        """The check's notification: each destination pending when the workspace may send
        it now (within its bound in flight, then its quota a minute), else not sent,
        saying why. Sent once the check is recorded."""
        facts = notification_facts(alert, check, kind, previous, self.console_url)
        secrets = open_secrets(self._sealer, alert)
        workspace = alert.workspace_id
        admitted = self.deliveries.admit(workspace, len(secrets.destinations))
        recorded: list[Delivery] = []
        sending: list[tuple[int, dict[str, Any]]] = []
        try:
            for place, dest in enumerate(secrets.destinations):
                delivery = Delivery(dest["type"], dest.get("url") or ", ".join(dest.get("to", [])))
                if place >= admitted:
                    delivery.error = (
                        f"not sent: the workspace already had {self.deliveries.per_workspace}"
                        " notifications waiting or being sent"
                    )
                elif self._quota_left(workspace):
                    delivery.pending = True
                    sending.append((place, dest))
                else:
                    delivery.error = (
                        f"not sent: the workspace sent more than {self._quota.limit}"
                        " notifications in the last minute"
                    )
                recorded.append(delivery)
        finally:
            self.deliveries.forgo(workspace, admitted - len(sending))
        report(facts, [d for d in recorded if not d.pending])
        # Marked notified at once (no second firing while this one is sent); put back if
        # it reaches nobody. Not marked when nothing is sent: the next check tries again.
        marked = bool(sending) or not secrets.destinations
        return Outgoing(
            workspace,
            check.id,
            facts,
            secrets.webhook_secret,
            self.notifier,
            recorded,
            sending,
            check.time if marked else None,
            (alert.last_notification, alert.last_notified_at),
        )

    def _quota_left(self, workspace_id: str) -> bool:
        try:
            self._quota.hit(workspace_id)
        except RateLimited:
            return False
        return True

    def _purge(self) -> None:
        try:
            with self._meta.connection(immediate=True) as c:
                repo.purge_checks(c, self._clock() - self.history)
        except Exception:
            log.exception("could not purge old alert checks")


def lease_for(limits: RunLimits) -> timedelta:
    """A lease that outlasts every check claimed with it, each at its time limits: a
    check whose lease ran out would be claimed, run and notified a second time. The
    notifications are sent after the check is recorded, outside the lease."""
    longest_check = CHECK_STATEMENTS * limits.max_run_seconds
    return max(LEASE, timedelta(seconds=CLAIMS_PER_THREAD * longest_check))


def next_due(due: datetime, frequency_s: int, now: datetime) -> datetime:
    """The first time on the alert's schedule after ``now``: missed checks are skipped."""
    step = timedelta(seconds=frequency_s)
    if now < due:
        return due + step
    missed = math.floor((now - due) / step)
    return due + (missed + 1) * step


def _refusal(exc: BadRequest) -> str:
    """A refused query's message with each of its fields' problems."""
    problems = [f"{e.get('field', 'query')}: {e.get('message', '')}" for e in exc.errors or []]
    return "; ".join([exc.reason or exc.message, *problems])
