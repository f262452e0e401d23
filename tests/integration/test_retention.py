"""Retention on both transports: events past their dataset's retention go, the rest stay,
whoever they belong to."""

from __future__ import annotations

import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from limelight.errors import BadRequest
from limelight.retention import Retention, parse_retention, set_dataset_retention
from limelight.settings import Settings
from limelight.store.events.base import EventRow, EventStore
from limelight.store.events.expiry import expire
from limelight.store.events.unscoped import unscoped
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant
from limelight.times import DAY_MS
from tests.support import migrated_sqlite

NOW = datetime(2026, 11, 23, 15, 30, tzinfo=UTC)
AGES_DAYS = [400, 61, 40, 31, 29, 10, 6.5, 1, 0]


def _rows(dataset: str) -> list[EventRow]:
    out = []
    for age in AGES_DAYS:
        ms = int((NOW - timedelta(days=age)).timestamp() * 1000)
        out.append(EventRow(dataset, "svc", "", ms, f"{age}", b'{"age":%s}' % str(age).encode()))
    return out


def _ages_left(store: EventStore, tenant: Tenant) -> Counter[tuple[str, float]]:
    found = store.query(
        f"SELECT dataset, id FROM {store.table} "
        "WHERE workspace_id = {w:String} AND environment_id = {e:String}",
        {"w": tenant.workspace_id, "e": tenant.environment_id},
        ["dataset", "id"],
    )
    return Counter((r["dataset"], float(r["id"])) for r in found.rows)


def _kept(dataset: str, days: float) -> Counter[tuple[str, float]]:
    return Counter((dataset, float(a)) for a in AGES_DAYS if a < days)


@pytest.fixture
def meta(tmp_path: Path) -> MetaDB:
    return migrated_sqlite(tmp_path / "meta.db")


def _tenant(meta: MetaDB) -> Tenant:
    from limelight.store.meta import repos

    with meta.session(immediate=True) as s:
        ws = repos.create_workspace(s, f"ws-{uuid.uuid4().hex[:8]}")
        env = repos.create_environment(s, ws, "prod", True)
        return Tenant(ws.id, env.id)


def test_each_dataset_keeps_its_events_for_its_retention_and_no_longer(
    store: EventStore, meta: MetaDB
) -> None:
    mine, theirs = _tenant(meta), _tenant(meta)
    for tenant in (mine, theirs):
        store.insert(tenant, _rows("logs") + _rows("audit") + _rows("debug"))
    settings = Settings(retention_days=30)
    # Mine: audit kept longer than the default, debug shorter. Theirs: the default only.
    set_dataset_retention(meta, settings, mine, "audit", "60d")
    set_dataset_retention(meta, settings, mine, "debug", "7d")

    expired = Retention(settings, meta, store, clock=lambda: NOW).apply()

    assert _ages_left(store, mine) == _kept("logs", 30) + _kept("audit", 60) + _kept("debug", 7)
    assert _ages_left(store, theirs) == _kept("logs", 30) + _kept("audit", 30) + _kept("debug", 30)
    # The day 400 days back is older than every retention: dropped whole, not deleted.
    assert (NOW - timedelta(days=400)).strftime("%Y%m%d") in expired.partitions
    # 61 days back is within no retention either, and goes whole with its day.
    assert (NOW - timedelta(days=61)).strftime("%Y%m%d") in expired.partitions

    again = Retention(settings, meta, store, clock=lambda: NOW).apply()
    assert (again.partitions, again.rows) == ([], 0)


def test_back_to_the_default_and_bad_retentions(store: EventStore, meta: MetaDB) -> None:
    tenant = _tenant(meta)
    store.insert(tenant, _rows("audit"))
    settings = Settings(retention_days=30)
    assert set_dataset_retention(meta, settings, tenant, "audit", "90d") == {
        "name": "audit", "retention": "90d", "retention_is_default": False}  # fmt: skip
    assert set_dataset_retention(meta, settings, tenant, "audit", None) == {
        "name": "audit", "retention": "30d", "retention_is_default": True}  # fmt: skip
    Retention(settings, meta, store, clock=lambda: NOW).apply()
    assert _ages_left(store, tenant) == _kept("audit", 30)

    for bad in ["7 days", "0d", "30m", "3651d", 7, "", "-1d"]:
        with pytest.raises(BadRequest) as caught:
            parse_retention(bad)
        assert caught.value.errors and caught.value.errors[0]["field"] == "retention"


def test_thousands_of_datasets_with_their_own_retention_are_one_pass(
    store: EventStore, meta: MetaDB
) -> None:
    from limelight.store.meta import retention_repo

    tenant = _tenant(meta)
    store.insert(tenant, _rows("logs") + _rows("d-7"))
    with meta.session(immediate=True) as s:
        for n in range(3000):  # spelled out in a statement, these passed its size limit
            retention_repo.set_retention(s, tenant, f"d-{n}", (1 + n % 2) * 86400 * 30)
    Retention(Settings(retention_days=30), meta, store, clock=lambda: NOW).apply()
    # d-7 keeps 60 days (odd n), logs the default 30.
    assert _ages_left(store, tenant) == _kept("logs", 30) + _kept("d-7", 60)


def test_a_pass_asked_to_stop_stops_between_statements_and_the_next_takes_up_the_rest(
    store: EventStore, meta: MetaDB
) -> None:
    tenant = _tenant(meta)
    store.insert(tenant, _rows("logs"))
    settings = Settings(retention_days=30)
    retention = Retention(settings, meta, store, clock=lambda: NOW)
    asked: list[int] = []

    def stopping() -> bool:
        asked.append(1)
        return len(asked) > 1  # after the first statement

    expire(unscoped(store), int(NOW.timestamp() * 1000) - 30 * DAY_MS, [], stopping)
    # One of the two old days went; the other, and the deletes, wait for the next pass.
    assert len(_ages_left(store, tenant)) == len(AGES_DAYS) - 1
    retention.apply()
    assert _ages_left(store, tenant) == _kept("logs", 30)
