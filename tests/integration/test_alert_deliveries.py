"""Notifications are sent apart from the checks: destinations that accept connections
and never answer hold up no check, and what one workspace may have in flight is
bounded, with what is past the bound recorded, logged and counted."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import select

from limelight.alerts.evaluator import Evaluator
from limelight.alerts.service import AlertService
from limelight.settings import Settings
from limelight.store.meta import queries_repo, repos
from limelight.store.meta.alerts_models import Alert, AlertCheck
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant
from tests import query_reference as ref
from tests.alert_support import SilentDestination, silent_destination, webhook_receiver
from tests.support import migrated_sqlite

ALERTS, DESTINATIONS = 6, 20
BOUND = 40
STOPPED = "not sent: the evaluator stopped before it was sent"
ALWAYS = {"operation": ">", "value": -1}  # a COUNT is never below 0: in ALARM at once


@dataclass
class Scene:
    meta: MetaDB
    settings: Settings
    alerts: AlertService
    silent: SilentDestination

    def tenant(self) -> tuple[Tenant, str]:
        """A new workspace with a query counting its events."""
        with self.meta.session(immediate=True) as s:
            ws = repos.create_workspace(s, f"deliveries-{uuid.uuid4().hex[:8]}")
            tenant = Tenant(ws.id, repos.create_environment(s, ws, "prod", redact=False).id)
            query = {"calculations": [{"operator": "COUNT"}]}
            return tenant, queries_repo.create_query(s, tenant, query, "u").id

    def alert(self, tenant: Tenant, query_id: str, destinations: int) -> str:
        hooks = [
            {"type": "webhook", "url": self.silent.url(f"/{uuid.uuid4().hex[:6]}/{i}")}
            for i in range(destinations)
        ]
        body = {"name": "n", "query_id": query_id, "threshold": ALWAYS, "destinations": hooks}
        return str(self.alerts.create(tenant, body, "u")["id"])

    def hanging_workspace(self) -> list[str]:
        """Tenant A: 6 alerts firing at once, each to 20 destinations that never answer."""
        tenant, query_id = self.tenant()
        return [self.alert(tenant, query_id, DESTINATIONS) for _ in range(ALERTS)]


@pytest.fixture
def scene(tmp_path: Path) -> Iterator[Scene]:
    meta = migrated_sqlite(tmp_path / "meta.db")
    settings = Settings(
        data_dir=tmp_path,
        destination_allow_networks="127.0.0.0/8",
        alert_notifications_per_minute=1000,  # the per-minute quota is not what is tested
    )
    with silent_destination() as silent:
        yield Scene(meta, settings, AlertService(settings, meta), silent)
    meta.dispose()


def test_another_workspaces_alert_is_checked_at_once_while_destinations_hang(
    scene: Scene, tmp_path_factory: pytest.TempPathFactory
) -> None:
    evaluator = Evaluator(scene.settings, scene.meta, ref.shared_chdb_store(tmp_path_factory))
    scene.hanging_workspace()
    evaluator.start()
    try:
        # A's notifications are being sent: connections held open, never answered.
        assert scene.silent.wait_for(DESTINATIONS, timeout=20) >= DESTINATIONS
        tenant, query_id = scene.tenant()
        alert_id = scene.alert(tenant, query_id, 0)
        deadline = time.monotonic() + 5
        while (shown := scene.alerts.get(tenant, alert_id))["last_checked_at"] is None:
            assert time.monotonic() < deadline, "B's new alert is not checked within 5 s"
            time.sleep(0.05)
        assert shown["state"] == "ALARM"
    finally:
        evaluator.close(grace=0)


def test_another_workspaces_notification_is_sent_at_once_while_destinations_hang(
    scene: Scene, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A workspace's bound holds its notifications to 40 destinations in flight, however
    they are spread: 40 alerts of one hanging destination each leave room for others."""
    evaluator = Evaluator(scene.settings, scene.meta, ref.shared_chdb_store(tmp_path_factory))
    hanging, query_id = scene.tenant()
    for _ in range(BOUND):
        scene.alert(hanging, query_id, 1)
    try:
        evaluator.tick()
        assert scene.silent.wait_for(BOUND, timeout=20) == BOUND  # all of them hang
        tenant, query_id = scene.tenant()
        with webhook_receiver() as hooks:
            body = {
                "name": "n",
                "query_id": query_id,
                "threshold": ALWAYS,
                "destinations": [{"type": "webhook", "url": hooks.url("/b")}],
            }
            scene.alerts.create(tenant, body, "u")
            evaluator.tick()
            arrived = hooks.wait_for("/b", 1, timeout=5)
        assert arrived, "B's notification is not sent within 5 s"
        assert [r.json()["notification"] for r in arrived] == ["firing"]
    finally:
        evaluator.close(grace=0)


def _notified(outcome: str) -> float:
    found = REGISTRY.get_sample_value(
        "limelight_notifications_total", {"kind": "webhook", "outcome": outcome}
    )
    return found or 0.0


def _notifications(meta: MetaDB, ids: list[str]) -> list[dict[str, Any]]:
    """The notifications of the alerts' one check each, in the alerts' order."""
    found: list[dict[str, Any]] = []
    with meta.session() as s:
        for alert_id in ids:
            [check] = s.scalars(select(AlertCheck).where(AlertCheck.alert_id == alert_id))
            found += check.notifications
    return found


def _last_notifications(meta: MetaDB, ids: list[str]) -> list[str | None]:
    with meta.session() as s:
        return [s.get_one(Alert, alert_id).last_notification for alert_id in ids]


def test_past_its_bound_a_workspaces_notifications_are_recorded_logged_and_counted(
    scene: Scene, tmp_path_factory: pytest.TempPathFactory, caplog: pytest.LogCaptureFixture
) -> None:
    settings = scene.settings.model_copy(update={"alert_deliveries_per_workspace": BOUND})
    evaluator = Evaluator(settings, scene.meta, ref.shared_chdb_store(tmp_path_factory))
    ids = scene.hanging_workspace()
    dropped_before = _notified("dropped")
    caplog.set_level(logging.INFO, "limelight.alerts")
    try:
        assert len(evaluator.tick()) == ALERTS  # every check recorded, none waits
        sent = _notifications(scene.meta, ids)
        assert len(sent) == ALERTS * DESTINATIONS
        pending = [n for n in sent if n["pending"]]
        dropped = [n for n in sent if not n["pending"]]
        assert len(pending) == BOUND
        assert {n["error"] for n in dropped} == {
            f"not sent: the workspace already had {BOUND} notifications waiting or being sent"
        }
        assert _notified("dropped") - dropped_before == len(dropped)
        refusals = [r for r in caplog.records if "webhook destination dropped" in r.message]
        assert len(refusals) == len(dropped)
        assert {(r.levelno, getattr(r, "alert_id", None)) for r in refusals} == {
            (logging.WARNING, alert_id) for alert_id in ids[2:]
        }  # the first two alerts' 40 destinations are within the bound
        assert scene.silent.wait_for(BOUND, timeout=20) == BOUND  # only those were sent
    finally:
        evaluator.close(grace=0)
    # Stopped before they were answered: recorded so, not left pending, and counted.
    after = _notifications(scene.meta, ids)
    assert not any(n["pending"] for n in after)
    assert [n["error"] for n in after].count(STOPPED) == BOUND
    assert _notified("dropped") - dropped_before == ALERTS * DESTINATIONS
    # Reaching no one, the firing notifications are sent again at the alerts' next checks.
    assert _last_notifications(scene.meta, ids) == [None] * ALERTS
