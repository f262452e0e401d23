"""Alerts checked by the evaluator on the engine, with real receivers and a clock the
test moves: firing, resolved, renotify, Slack and email, retries, refusals, errors."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from limelight.alerts.delivery import Deliveries
from limelight.alerts.destinations import UNREACHABLE
from limelight.alerts.evaluator import CheckReport, Evaluator
from limelight.alerts.notify import Notifier
from limelight.alerts.service import AlertService, destination_policy, smtp_settings
from limelight.auth.sealing import Sealer
from limelight.errors import BadRequest, StoreError
from limelight.scoped import ScopedStatement
from limelight.settings import Settings
from limelight.store.events.base import EventStore, QueryResult
from limelight.store.meta import alerts_repo, queries_repo, repos
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow
from limelight.tenant import Tenant
from tests import query_reference as ref
from tests.alert_support import Mailbox, WebhookReceiver, smtp_server, webhook_receiver
from tests.held_store import PassingStore
from tests.support import migrated_sqlite

P99_BY_SERVICE = {
    "calculations": [{"operator": "P99", "key": "duration"}, {"operator": "COUNT"}],
    "group_bys": [{"key": "service"}],
}


@dataclass
class World:
    meta: MetaDB
    store: Any
    tenant: Tenant
    query_id: str
    settings: Settings
    alerts: AlertService
    evaluator: Evaluator
    hooks: WebhookReceiver
    mail: Mailbox
    clock: list[datetime]
    sleeps: list[float]

    def at(self, seconds: float) -> None:
        self.clock[0] = self.clock[0] + timedelta(seconds=seconds)

    def tick(self, evaluator: Evaluator | None = None) -> list[CheckReport]:
        """One round of the evaluator, and its notifications sent: they go apart from the
        checks, once each check is recorded."""
        evaluator = evaluator or self.evaluator
        reports = evaluator.tick()
        assert evaluator.deliveries.wait_idle(30), "notifications still in flight after 30 s"
        return reports

    def now_ms(self) -> int:
        return int(self.clock[0].timestamp() * 1000)

    def send(self, events: list[dict[str, Any]]) -> None:
        ref.store_events(self.store, self.tenant, "requests", events)

    def create(self, **fields: Any) -> dict[str, Any]:
        body = {
            "name": "slow checkouts",
            "query_id": self.query_id,
            "threshold": {"operation": ">", "value": 500},
            "frequency": "1m",
            "destinations": [{"type": "webhook", "url": self.hooks.url("/hook")}],
            **fields,
        }
        return self.alerts.create(self.tenant, body, "user-1")


@pytest.fixture
def world(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    meta = migrated_sqlite(tmp_path / "meta.db")
    store = ref.shared_chdb_store(tmp_path_factory)
    with meta.session(immediate=True) as s:
        ws = repos.create_workspace(s, f"alerts-{uuid.uuid4().hex[:8]}")
        tenant = Tenant(ws.id, repos.create_environment(s, ws, "prod", redact=False).id)
        query_id = queries_repo.create_query(s, tenant, P99_BY_SERVICE, "user-1").id
    with webhook_receiver() as hooks, smtp_server() as mail:
        settings = Settings(
            data_dir=tmp_path,
            destination_allow_networks="127.0.0.0/8",
            smtp_host="127.0.0.1",
            smtp_port=mail.port,
            smtp_starttls=False,
            smtp_from="alerts@limelight.test",
        )
        sleeps: list[float] = []

        async def sleep(seconds: float) -> None:
            sleeps.append(seconds)

        notifier = Notifier(destination_policy(settings), smtp_settings(settings), sleep)
        clock = [utcnow()]
        evaluator = Evaluator(settings, meta, store, clock=lambda: clock[0], notifier=notifier)
        alerts = AlertService(settings, meta, notifier)
        yield World(
            meta, store, tenant, query_id, settings, alerts, evaluator, hooks, mail, clock, sleeps
        )
    meta.dispose()


def _slow(world: World, service: str, duration: int, count: int = 3) -> list[dict[str, Any]]:
    now = world.now_ms()
    return [
        {"timestamp": now - 2000 - i, "service": service, "duration": duration}
        for i in range(count)
    ]


def test_the_history_keeps_a_destinations_url_sealed(world: World) -> None:
    """A webhook's or Slack's URL is often a credential: the check's record of where it
    notified holds it sealed, as the alert does; clients read it back in clear."""
    world.send(_slow(world, "checkout", 900))
    hook = world.hooks.url("/hook/t0kenInThePath")
    created = world.create(destinations=[{"type": "webhook", "url": hook}])
    world.at(1)
    world.tick()
    with world.meta.connection() as c:
        stored = c.execute(
            text("SELECT notifications FROM alert_checks WHERE alert_id = :id"),
            {"id": created["id"]},
        ).scalar_one()
    assert "t0kenInThePath" not in str(stored)
    [check] = world.alerts.checks(world.tenant, created["id"], 10, None)
    assert [(n["target"], n["ok"]) for n in check["notifications"]] == [(hook, True)]


def test_firing_then_resolved_with_the_groups_and_the_history(world: World) -> None:
    world.send(_slow(world, "checkout", 900) + _slow(world, "search", 100))
    created = world.create()
    with world.meta.session() as s:
        due = alerts_repo.find_alert(s, created["id"]).next_check_at
    assert due is not None
    world.at(1)
    [report] = world.tick()
    # Checked at the clock's time, from the due time its creation set.
    assert report.notification == "firing"
    assert report.lag_seconds == (world.clock[0] - due).total_seconds()

    [firing] = world.hooks.on("/hook")
    assert firing.signed_by(created["webhook_secret"])
    assert not firing.signed_by("ll_ws_another-secret")
    body = firing.json()
    assert body["alert"]["id"] == created["id"] and body["alert"]["name"] == "slow checkouts"
    assert body["alert"]["url"].endswith(f"/alerts/{created['id']}")
    assert (body["notification"], body["state"], body["previous_state"]) == (
        "firing",
        "ALARM",
        "OK",
    )
    check = body["check"]
    assert check["calculation"] == "P99(duration)"
    assert check["threshold"] == {"operation": ">", "value": 500}
    assert check["to"] - check["from"] == 60_000
    assert sorted(check["values"], key=lambda v: v["groups"]["service"]) == [
        {"groups": {"service": "checkout"}, "value": 900, "alarm": True},
        {"groups": {"service": "search"}, "value": 100, "alarm": False},
    ]

    world.at(30)
    assert world.tick() == []  # not due again within its minute
    world.at(31)  # the slow requests are out of the window; fast ones came since
    world.send(_slow(world, "checkout", 80))
    [report] = world.tick()
    assert report.notification == "resolved"
    resolved = world.hooks.on("/hook")[-1].json()
    assert (resolved["notification"], resolved["state"], resolved["previous_state"]) == (
        "resolved",
        "OK",
        "ALARM",
    )
    assert resolved["check"]["values"] == [
        {"groups": {"service": "checkout"}, "value": 80, "alarm": False}
    ]

    history = world.alerts.checks(world.tenant, created["id"], 10, None)
    assert [(c["state"], c["previous_state"]) for c in history] == [
        ("OK", "ALARM"),
        ("ALARM", "OK"),
    ]
    assert [c["notifications"][0]["ok"] for c in history] == [True, True]
    assert world.alerts.get(world.tenant, created["id"])["state"] == "OK"
    # Then nothing arrives: a P99 of no events is no data, which tells nobody.
    world.at(60)
    [report] = world.tick()
    assert (report.state, report.notification) == ("NO_DATA", None)


def test_when_the_events_stop_a_grouped_count_resolves(world: World) -> None:
    world.send(_slow(world, "checkout", 10, count=7))
    world.create(calculation="COUNT", threshold={"operation": ">=", "value": 5})
    world.at(1)
    assert [r.notification for r in world.tick()] == ["firing"]
    world.at(61)
    assert [r.notification for r in world.tick()] == ["resolved"]
    resolved = world.hooks.on("/hook")[-1].json()
    assert resolved["state"] == "OK"
    assert resolved["check"]["values"] == [{"groups": {}, "value": 0, "alarm": False}]


def test_a_lasting_alarm_notifies_again_only_after_renotify(world: World) -> None:
    world.create(
        calculation="COUNT",
        threshold={"operation": "<", "value": 1},  # nothing arrives: in alarm throughout
        renotify="3m",
    )
    world.at(1)
    kinds = []
    for _ in range(7):
        kinds += [r.notification for r in world.tick()]
        world.at(60)
    assert kinds == ["firing", None, None, "firing", None, None, "firing"]


def test_slack_and_email_destinations_receive_theirs(world: World) -> None:
    world.send(_slow(world, "checkout", 900))
    created = world.create(
        destinations=[
            {"type": "slack", "url": world.hooks.url("/slack")},
            {"type": "email", "to": ["oncall@example.com", "lead@example.com"]},
        ]
    )
    world.at(1)
    world.tick()
    [slack] = world.hooks.on("/slack")
    message = slack.json()
    assert message["text"].startswith("[FIRING] slow checkouts")
    attachment = message["attachments"][0]
    assert attachment["color"] == "#d93025"
    assert attachment["title_link"].endswith(f"/alerts/{created['id']}")
    assert {"title": "service=checkout", "value": "900 (alarm)", "short": True} in attachment[
        "fields"
    ]
    [mail] = world.mail.wait_for(1)
    assert mail["To"] == "oncall@example.com, lead@example.com"
    assert mail["From"] == "alerts@limelight.test"
    assert mail["Subject"].startswith("[FIRING] slow checkouts: P99(duration) > 500")
    text = mail.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    html = mail.get_body(("html",)).get_content()  # type: ignore[union-attr]
    assert "service=checkout: 900 (alarm)" in text
    assert "<td>service=checkout</td><td>900 (alarm)</td>" in html


def test_a_failing_destination_is_tried_three_times_and_recorded(world: World) -> None:
    world.send(_slow(world, "checkout", 900))
    world.hooks.fail["/flaky"] = 2  # two 503s, then 200
    world.hooks.fail["/down"] = 10
    created = world.create(
        destinations=[
            {"type": "webhook", "url": world.hooks.url("/flaky")},
            {"type": "webhook", "url": world.hooks.url("/down")},
        ]
    )
    world.at(1)
    world.tick()
    [check] = world.alerts.checks(world.tenant, created["id"], 10, None)
    flaky, down = check["notifications"]
    assert (flaky["ok"], flaky["status"], flaky["tries"]) == (True, 200, 3)
    assert (down["ok"], down["status"], down["tries"]) == (False, 503, 3)
    assert down["error"] == "the destination answered 503"
    assert sorted(world.sleeps) == [1.0, 1.0, 2.0, 2.0]  # backoff between tries, each
    deliveries = {r.headers["x-limelight-delivery"] for r in world.hooks.on("/flaky")}
    assert len(deliveries) == 1  # the same delivery id on every try


def test_destinations_in_refused_ranges(world: World) -> None:
    with pytest.raises(BadRequest) as refused:
        world.create(destinations=[{"type": "webhook", "url": "http://10.1.2.3/hook"}])
    assert refused.value.errors == [
        {
            "field": "destinations[0].url",
            "message": "the address 10.1.2.3 is in a loopback, private, link-local or reserved"
            " range; the operator can allow it with LIMELIGHT_DESTINATION_ALLOW_NETWORKS",
        }
    ]
    # A name that resolves into a refused range is refused when the notification is sent.
    strict = Settings(data_dir=world.settings.data_dir)
    world.evaluator.notifier = Notifier(destination_policy(strict), smtp_settings(strict))
    world.send(_slow(world, "checkout", 900))
    created = world.create(destinations=[{"type": "webhook", "url": "http://localhost:9/hook"}])
    world.at(1)
    world.tick()
    [check] = world.alerts.checks(world.tenant, created["id"], 10, None)
    [delivery] = check["notifications"]
    assert delivery["ok"] is False and delivery["tries"] == 1
    assert delivery["error"] == UNREACHABLE  # the same as for a name that does not resolve


class FailingStore(PassingStore):
    """The engine failing every statement, as an engine over its memory limit does."""

    def read(self, statement: ScopedStatement) -> QueryResult:
        raise StoreError(
            "Code: 241. DB::Exception: Memory limit (total) exceeded: would use 9.00 GiB"
            " (attempt to allocate chunk of 4 MiB), maximum: 8.00 GiB. (MEMORY_LIMIT_EXCEEDED)",
            code=241,
        )


def test_a_failing_query_puts_the_alert_in_error_with_the_reason(world: World) -> None:
    created = world.create()
    failing = Evaluator(
        world.settings, world.meta, FailingStore(world.store), clock=lambda: world.clock[0]
    )
    world.at(1)
    [report] = failing.tick()
    assert report.state == "ERROR" and report.notification is None
    [check] = world.alerts.checks(world.tenant, created["id"], 10, None)
    assert check["state"] == "ERROR"
    assert check["error"].startswith("the query needed more memory than its limit")
    assert world.hooks.on("/hook") == []


@pytest.mark.parametrize(
    "spec",
    [
        # A statement longer than the engine parses (saved before queries were checked
        # for it, or grown by the typed read).
        {
            **P99_BY_SERVICE,
            "filters": [{"key": "id", "operation": "IN", "value": list(range(20_000))}],
        },
        # A query saved before lists were bounded.
        {
            **P99_BY_SERVICE,
            "filters": [{"key": f"k{n}", "operation": "EXISTS"} for n in range(101)],
        },
    ],
    ids=["too-long", "too-many-filters"],
)
def test_a_query_that_asks_too_much_puts_the_alert_in_error_saying_what(
    world: World, spec: dict[str, Any]
) -> None:
    created = world.create()
    with world.meta.session(immediate=True) as s:  # as saved before the limits
        queries_repo.replace_query_fields(s, world.tenant, world.query_id, spec)
    world.at(1)
    [report] = world.tick()
    assert report.state == "ERROR"
    [check] = world.alerts.checks(world.tenant, created["id"], 10, None)
    assert "internal error" not in check["error"]
    assert "at most" in check["error"], check["error"]


def test_a_test_notification_has_the_shape_of_a_real_one(world: World) -> None:
    created = world.create()
    [outcome] = world.alerts.send_test(world.tenant, created["id"])
    assert outcome["ok"] is True
    [sent] = world.hooks.on("/hook")
    assert sent.signed_by(created["webhook_secret"])
    body = sent.json()
    assert body["notification"] == "test"
    assert set(body) == {"alert", "notification", "state", "previous_state", "check"}
    assert set(body["check"]) == {"id", "time", "from", "to", "calculation", "threshold", "values"}


class BrokenDeliveries(Deliveries):
    """The evaluator's deliveries with a fault of their own: every admission raises."""

    def admit(self, *_: Any) -> int:
        raise RuntimeError("a fault in the deliveries")


def test_a_check_that_fails_is_tried_again_a_minute_later_not_in_a_loop(world: World) -> None:
    world.send(_slow(world, "checkout", 900))
    created = world.create()
    working = world.evaluator.deliveries
    world.evaluator.deliveries = BrokenDeliveries(
        world.meta, 40, Sealer.of_settings(world.settings)
    )
    world.at(1)
    ticking = threading.Thread(target=world.evaluator.tick, daemon=True)
    ticking.start()
    ticking.join(10)
    looping = ticking.is_alive()
    if looping:  # it claims the alert again and again: stop it
        world.evaluator.close()
        ticking.join(10)
    assert not looping
    assert world.alerts.checks(world.tenant, created["id"], 10, None) == []
    world.evaluator.deliveries = working
    assert world.tick() == []  # not due again at once
    world.at(61)
    world.send(_slow(world, "checkout", 900))
    [report] = world.tick()
    assert report.notification == "firing"
    assert len(world.hooks.on("/hook")) == 1


class BrokenNotifier(Notifier):
    """A notifier with a fault of its own: every delivery raises."""

    async def deliver(self, *_: Any) -> Any:
        raise RuntimeError("a fault in the notifier")


def test_a_notification_that_reaches_no_one_is_sent_again_at_the_next_check(
    world: World,
) -> None:
    world.send(_slow(world, "checkout", 900))
    world.hooks.fail["/down"] = 3  # the three tries of the first check's notification
    created = world.create(destinations=[{"type": "webhook", "url": world.hooks.url("/down")}])
    world.at(1)
    assert [r.notification for r in world.tick()] == ["firing"]
    world.at(60)
    world.send(_slow(world, "checkout", 900))
    assert [r.notification for r in world.tick()] == ["firing"]  # again: the first failed
    world.at(60)
    world.send(_slow(world, "checkout", 900))
    assert [r.notification for r in world.tick()] == [None]  # the second was delivered
    checks = world.alerts.checks(world.tenant, created["id"], 10, None)
    assert [[(n["ok"], n["tries"]) for n in c["notifications"]] for c in checks] == [
        [],
        [(True, 1)],
        [(False, 3)],
    ]
    # A fault of the notifier's own is recorded as such, and tried again likewise.
    world.evaluator.notifier = BrokenNotifier(
        world.evaluator.notifier.policy, world.evaluator.notifier.smtp
    )
    world.at(60)
    world.send(_slow(world, "checkout", 80))  # OK: resolved is due
    assert [r.notification for r in world.tick()] == ["resolved"]
    [latest, *_] = world.alerts.checks(world.tenant, created["id"], 10, None)
    assert latest["notifications"] == [
        {
            "type": "webhook",
            "target": world.hooks.url("/down"),
            "ok": False,
            "status": None,
            "error": "not sent: an internal error of the server",
            "tries": 0,
            "pending": False,
        }
    ]
    world.evaluator.notifier = Notifier(
        destination_policy(world.settings), smtp_settings(world.settings)
    )
    world.at(60)
    world.send(_slow(world, "checkout", 80))
    assert [r.notification for r in world.tick()] == ["resolved"]
    assert world.hooks.on("/down")[-1].json()["notification"] == "resolved"


def test_a_threshold_beyond_64_bits_is_sent_as_the_double_it_is(world: World) -> None:
    world.create(calculation="COUNT", threshold={"operation": "<", "value": 1e20})
    world.at(1)
    [report] = world.tick()
    assert report.notification == "firing"
    [firing] = world.hooks.on("/hook")
    assert firing.json()["check"]["threshold"] == {"operation": "<", "value": 1e20}


class ChangedDuringItsCheck(PassingStore):
    """The engine, with the alert changed through the API while its query runs."""

    def __init__(self, store: EventStore, change: Callable[[], object] | None) -> None:
        super().__init__(store)
        self._change = change

    def read(self, statement: ScopedStatement) -> QueryResult:
        change, self._change = self._change, None
        if change is not None:
            change()
        return self.store.read(statement)


def test_an_alert_changed_during_its_check_is_checked_again_at_once(world: World) -> None:
    world.send(_slow(world, "checkout", 900))
    created = world.create()
    raise_it = {"threshold": {"operation": ">", "value": 1000}}
    store = ChangedDuringItsCheck(
        world.store, lambda: world.alerts.update(world.tenant, created["id"], raise_it)
    )

    def clock() -> datetime:  # time passes as the checks run
        world.at(0.001)
        return world.clock[0]

    evaluator = Evaluator(
        world.settings, world.meta, store, clock=clock, notifier=world.evaluator.notifier
    )
    world.at(1)
    # With the threshold it read (500), then with the new one: not a minute later.
    reports = world.tick(evaluator)
    assert [(r.state, r.notification) for r in reports] == [
        ("ALARM", "firing"),
        ("OK", "resolved"),
    ]


def test_a_workspace_sends_at_most_its_quota_of_notifications_a_minute(world: World) -> None:
    quota = world.settings.model_copy(update={"alert_notifications_per_minute": 2})
    evaluator = Evaluator(
        quota,
        world.meta,
        world.store,
        clock=lambda: world.clock[0],
        notifier=world.evaluator.notifier,
    )
    world.send(_slow(world, "checkout", 900))
    created = world.create(
        destinations=[{"type": "webhook", "url": world.hooks.url(f"/q{i}")} for i in range(3)]
    )
    world.at(1)
    world.tick(evaluator)
    [check] = world.alerts.checks(world.tenant, created["id"], 10, None)
    outcomes = [
        (n["target"].rsplit("/", 1)[-1], n["ok"], n["error"]) for n in check["notifications"]
    ]
    assert outcomes == [
        ("q0", True, None),
        ("q1", True, None),
        ("q2", False, "not sent: the workspace sent more than 2 notifications in the last minute"),
    ]
    assert world.hooks.on("/q2") == []


def test_a_checks_history_keeps_the_groups_in_alarm_first_and_at_most_a_hundred(
    world: World,
) -> None:
    now = world.now_ms()
    world.send(
        [
            {
                "timestamp": now - 2000,
                "service": f"svc-{i:03d}",
                "duration": 900 if i % 50 == 7 else 10,
            }
            for i in range(150)
        ]
    )
    created = world.create()
    world.at(1)
    world.tick()
    [check] = world.alerts.checks(world.tenant, created["id"], 10, None)
    assert check["values_omitted"] == 50 and len(check["values"]) == 100
    assert [v["groups"]["service"] for v in check["values"][:3]] == [
        "svc-007",
        "svc-057",
        "svc-107",
    ]
    assert not any(v["alarm"] for v in check["values"][3:])
    # The notification named every group.
    assert len(world.hooks.on("/hook")[0].json()["check"]["values"]) == 150
