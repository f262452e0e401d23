"""Evaluators share due alerts through the metadata database: every check runs exactly
once, however many evaluators tick at once, on SQLite and on PostgreSQL."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from limelight.alerts.evaluator import LEASE, Evaluator
from limelight.alerts.service import AlertService
from limelight.settings import Settings
from limelight.store.meta import alerts_repo, queries_repo, repos
from limelight.store.meta.alerts_models import AlertCheck
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow
from limelight.tenant import Tenant
from tests import query_reference as ref

ALERTS = 120


def _tenant_with_alerts(db: MetaDB, settings: Settings, count: int) -> tuple[Tenant, list[str]]:
    with db.session(immediate=True) as s:
        ws = repos.create_workspace(s, f"claims-{uuid.uuid4().hex[:8]}")
        tenant = Tenant(ws.id, repos.create_environment(s, ws, "prod", redact=False).id)
        query = {"calculations": [{"operator": "COUNT"}]}
        query_id = queries_repo.create_query(s, tenant, query, "u").id
    service = AlertService(settings, db)
    body = {"name": "n", "query_id": query_id, "threshold": {"operation": ">", "value": 1}}
    return tenant, [service.create(tenant, body, "u")["id"] for _ in range(count)]


def _checks(db: MetaDB, ids: list[str]) -> Counter[str]:
    with db.session() as s:
        found = s.scalars(select(AlertCheck.alert_id).where(AlertCheck.alert_id.in_(ids)))
        return Counter(found)


def _tick_together(evaluators: list[Evaluator]) -> None:
    start = threading.Barrier(len(evaluators))

    def run(evaluator: Evaluator) -> None:
        start.wait()
        evaluator.tick()

    threads = [threading.Thread(target=run, args=(e,)) for e in evaluators]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)


def test_two_evaluators_check_every_due_alert_exactly_once(
    db: MetaDB, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    settings = Settings(data_dir=tmp_path, alert_threads=2)
    store = ref.shared_chdb_store(tmp_path_factory)
    _, ids = _tenant_with_alerts(db, settings, ALERTS)
    clock = [utcnow() + timedelta(seconds=1)]
    evaluators = [
        Evaluator(settings, db, store, clock=lambda: clock[0], owner=f"e{i}") for i in range(2)
    ]
    for e in evaluators:
        e.start_pool()
    try:
        _tick_together(evaluators)
        assert _checks(db, ids) == Counter(dict.fromkeys(ids, 1))
        clock[0] += timedelta(seconds=60)  # every alert due again
        _tick_together(evaluators)
        assert _checks(db, ids) == Counter(dict.fromkeys(ids, 2))
    finally:
        for e in evaluators:
            e.close()


def test_a_crashed_evaluators_lease_runs_out(db: MetaDB, tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    _, [alert_id] = _tenant_with_alerts(db, settings, 1)
    now = utcnow() + timedelta(seconds=1)
    with db.connection(immediate=True) as c:  # an evaluator claims it, then dies
        assert alerts_repo.claim_due(c, "crashed", now, now + LEASE, 10) == [alert_id]
    later: list[Any] = []
    for moment in (now + LEASE - timedelta(seconds=1), now + LEASE + timedelta(seconds=1)):
        with db.connection(immediate=True) as c:
            later.append(alerts_repo.claim_due(c, "alive", moment, moment + LEASE, 10))
    assert later == [[], [alert_id]]


def test_a_workspace_with_many_due_alerts_shares_each_round_with_the_others(
    db: MetaDB, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path)
    _, busy = _tenant_with_alerts(db, settings, 10)
    _, [quiet] = _tenant_with_alerts(db, settings, 1)  # due after all of the busy ones
    now = utcnow() + timedelta(seconds=1)
    with db.connection(immediate=True) as c:
        first = alerts_repo.claim_due(c, "e", now, now + LEASE, 4, per_workspace=2)
    assert quiet in first
    assert len(first) == 3 and len(set(first) & set(busy)) == 2
