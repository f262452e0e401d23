"""A test notification tells a tenant nothing of the operator's network: to a name that
resolves to a private address and to a name that does not resolve, the answer is the
same, byte for byte (the API's, the CLI's and the console's, which share it)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import orjson

from limelight.alerts.destinations import UNREACHABLE
from limelight.alerts.service import AlertService
from limelight.settings import Settings
from limelight.store.events.base import Tenant
from limelight.store.meta import queries_repo, repos
from limelight.store.meta.db import MetaDB


def test_a_private_name_and_an_unknown_name_answer_alike(db: MetaDB, tmp_path: Path) -> None:
    with db.session(immediate=True) as s:
        ws = repos.create_workspace(s, f"oracle-{uuid.uuid4().hex[:8]}")
        tenant = Tenant(ws.id, repos.create_environment(s, ws, "prod", redact=False).id)
        query = {"calculations": [{"operator": "COUNT"}]}
        query_id = queries_repo.create_query(s, tenant, query, "u").id
    alerts = AlertService(Settings(data_dir=tmp_path), db)
    body = {
        "name": "errors",
        "query_id": query_id,
        "threshold": {"operation": ">", "value": 1},
        "destinations": [
            {"type": "webhook", "url": "http://localhost:9/hook"},  # resolves to loopback
            {"type": "webhook", "url": "http://nowhere.invalid:9/hook"},  # resolves to nothing
        ],
    }
    alert_id = alerts.create(tenant, body, "u")["id"]

    for sent in (
        alerts.send_test(None, alert_id),  # the CLI's
        asyncio.run(alerts.send_test_waiting(tenant, alert_id)),  # the API's and the console's
    ):
        private, unknown = ({k: v for k, v in d.items() if k != "target"} for d in sent)
        assert orjson.dumps(private) == orjson.dumps(unknown)
        assert private["error"] == UNREACHABLE and private["ok"] is False
