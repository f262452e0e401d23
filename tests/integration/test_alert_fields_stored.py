"""What a client sends is refused with a 400, or stored and read back: never a
database error, on SQLite or on PostgreSQL (whose text cannot hold U+0000)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from limelight.alerts.service import AlertService
from limelight.errors import BadRequest, NotFound
from limelight.settings import Settings
from limelight.store.events.base import Tenant
from limelight.store.meta import queries_repo, repos
from limelight.store.meta.db import MetaDB


def _tenant_and_query(db: MetaDB) -> tuple[Tenant, str]:
    with db.session(immediate=True) as s:
        ws = repos.create_workspace(s, f"fields-{uuid.uuid4().hex[:8]}")
        tenant = Tenant(ws.id, repos.create_environment(s, ws, "prod", redact=False).id)
        query = {"calculations": [{"operator": "COUNT"}]}
        return tenant, queries_repo.create_query(s, tenant, query, "u").id


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", "slow\x00checkouts"),
        ("name", "slow\ncheckouts"),  # a name is one line (an email's subject, a table row)
        ("name", "slow\x1b[2Jcheckouts"),
        ("description", "see\x00the runbook"),
        ("query_id", "1m8\x00"),
    ],
)
def test_text_no_database_holds_is_a_400_naming_the_field(
    db: MetaDB, tmp_path: Path, field: str, value: Any
) -> None:
    tenant, query_id = _tenant_and_query(db)
    alerts = AlertService(Settings(data_dir=tmp_path), db)
    body = {"name": "n", "query_id": query_id, "threshold": {"operation": ">", "value": 1}}
    with pytest.raises(BadRequest) as refused:
        alerts.create(tenant, {**body, field: value}, "u")
    assert [e["field"] for e in refused.value.errors or []] == [field]
    alert_id = alerts.create(tenant, body, "u")["id"]
    with pytest.raises(BadRequest):
        alerts.update(tenant, alert_id, {field: value})


def test_an_id_no_alert_can_have_is_unknown(db: MetaDB, tmp_path: Path) -> None:
    tenant, _ = _tenant_and_query(db)
    alerts = AlertService(Settings(data_dir=tmp_path), db)
    for call in (
        lambda: alerts.get(tenant, "1m8\x00"),
        lambda: alerts.update(tenant, "1m8\x00", {"name": "x"}),
        lambda: alerts.delete(tenant, "1m8\x00"),
        lambda: alerts.checks(tenant, "1m8\x00", 10, None),
        lambda: alerts.send_test(tenant, "1m8\x00"),
        lambda: alerts.send_test(None, "1m8\x00"),
    ):
        with pytest.raises(NotFound):
            call()
