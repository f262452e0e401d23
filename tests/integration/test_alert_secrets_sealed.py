"""An alert's destination secrets (Slack and webhook URLs, the webhook signing secret)
are sealed in the metadata database with the installation's secret key: the database
never holds them in clear, notifications still carry them, and a key rotation keeps
them readable. SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import text

from limelight.alerts.service import AlertService
from limelight.auth.alert_secrets import reseal_all
from limelight.auth.sealing import Sealer, SecretUnreadable
from limelight.settings import Settings
from limelight.store.events.base import Tenant
from limelight.store.meta import queries_repo, repos
from limelight.store.meta.db import MetaDB
from tests.alert_support import WebhookReceiver, webhook_receiver
from tests.support import postgres_schema

KEY_A = "a-first-secret-key-of-this-installation-0123456789"
KEY_B = "b-second-secret-key-of-this-installation-987654321"
SLACK = "https://hooks.slack.com/services/T0001/B0001/sl4ckT0ken"
HOOK_TOKEN = "h00kT0ken"


@pytest.fixture(scope="module")
def hooks() -> Iterator[WebhookReceiver]:
    with webhook_receiver() as receiver:
        yield receiver


def _service(db: MetaDB, tmp_path: Path, key: str, previous: str = "") -> AlertService:
    settings = Settings(
        data_dir=tmp_path,
        secret_key=key,
        previous_secret_keys=previous,
        destination_allow_networks="127.0.0.0/8",
    )
    return AlertService(settings, db)


def _alert(
    db: MetaDB, alerts: AlertService, hooks: WebhookReceiver
) -> tuple[Tenant, dict[str, Any], list[dict[str, Any]]]:
    with db.session(immediate=True) as s:
        ws = repos.create_workspace(s, f"sealed-{uuid.uuid4().hex[:8]}")
        tenant = Tenant(ws.id, repos.create_environment(s, ws, "prod", redact=False).id)
        query = {"calculations": [{"operator": "COUNT"}]}
        query_id = queries_repo.create_query(s, tenant, query, "u").id
    destinations = [
        {"type": "webhook", "url": hooks.url(f"/in/{HOOK_TOKEN}")},
        {"type": "slack", "url": SLACK},
    ]
    body = {
        "name": "errors",
        "query_id": query_id,
        "threshold": {"operation": ">", "value": 1},
        "destinations": destinations,
    }
    return tenant, alerts.create(tenant, body, "u"), destinations


def _stored(db: MetaDB, alert_id: str) -> tuple[str, str]:
    with db.connection() as c:
        row = c.execute(
            text("SELECT sealed_destinations, sealed_webhook_secret FROM alerts WHERE id = :id"),
            {"id": alert_id},
        ).one()
    return row[0], row[1]


def _signed_test(
    alerts: AlertService, tenant: Tenant, alert_id: str, hooks: WebhookReceiver, secret: str
) -> bool:
    before = len(hooks.on(f"/in/{HOOK_TOKEN}"))
    sent = alerts.send_test(tenant, alert_id)
    assert sent[0]["ok"], sent
    received = hooks.wait_for(f"/in/{HOOK_TOKEN}", before + 1)[before]
    return received.signed_by(secret)


def test_the_database_never_holds_a_destination_secret_in_clear(
    db: MetaDB, tmp_path: Path, hooks: WebhookReceiver
) -> None:
    alerts = _service(db, tmp_path, KEY_A)
    tenant, created, destinations = _alert(db, alerts, hooks)
    secret = created["webhook_secret"]

    stored = " ".join(_stored(db, created["id"]))
    for clear in ("sl4ckT0ken", HOOK_TOKEN, "hooks.slack.com", secret):
        assert clear not in stored
    if db.engine.dialect.name == "sqlite":  # the file's bytes, its write-ahead log too
        path = Path(str(db.engine.url.database))
        written = b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())
        assert b"errors" in written  # the alert is in these bytes
        for clear in ("sl4ckT0ken", HOOK_TOKEN, secret):
            assert clear.encode() not in written

    assert alerts.get(tenant, created["id"])["destinations"] == destinations
    assert _signed_test(alerts, tenant, created["id"], hooks, secret)


def test_a_rotated_key_reads_what_the_previous_one_sealed_and_reseals_it(
    db: MetaDB, tmp_path: Path, hooks: WebhookReceiver
) -> None:
    tenant, created, destinations = _alert(db, _service(db, tmp_path, KEY_A), hooks)
    secret, sealed_by_a = created["webhook_secret"], _stored(db, created["id"])

    # The new key alone cannot open what the old one sealed: a clear 503, not a 500.
    with pytest.raises(SecretUnreadable) as refused:
        _service(db, tmp_path, KEY_B).get(tenant, created["id"])
    assert refused.value.status == 503
    assert "LIMELIGHT_PREVIOUS_SECRET_KEYS" in str(refused.value)

    rotated = _service(db, tmp_path, KEY_B, previous=KEY_A)
    assert rotated.get(tenant, created["id"])["destinations"] == destinations
    assert _signed_test(rotated, tenant, created["id"], hooks, secret)

    done = reseal_all(db, rotated.sealer)
    assert (done.resealed, done.unreadable) == (1, [])
    assert _stored(db, created["id"]) != sealed_by_a
    assert reseal_all(db, rotated.sealer).resealed == 0  # already under the newest key

    # Resealed, the old key is no longer needed, and no longer opens them.
    after = _service(db, tmp_path, KEY_B)
    assert after.get(tenant, created["id"])["destinations"] == destinations
    assert _signed_test(after, tenant, created["id"], hooks, secret)
    with pytest.raises(SecretUnreadable):
        _service(db, tmp_path, KEY_A).get(tenant, created["id"])


def test_resealing_names_the_alerts_no_configured_key_opens(
    db: MetaDB, tmp_path: Path, hooks: WebhookReceiver
) -> None:
    _, created, _ = _alert(db, _service(db, tmp_path, KEY_A), hooks)
    sealed = _stored(db, created["id"])
    done = reseal_all(db, _service(db, tmp_path, KEY_B).sealer)
    assert created["id"] in done.unreadable
    assert _stored(db, created["id"]) == sealed  # left as it was, for the right key


# -- the migration that seals what earlier versions stored in clear ----------------------

CLEAR_ROWS = """
INSERT INTO workspaces (id, name, created_at) VALUES ('ws_1', 'team', '2026-01-01 00:00:00');
INSERT INTO environments (id, workspace_id, name, redact_secrets, created_at) VALUES
  ('env_1', 'ws_1', 'prod', true, '2026-01-01 00:00:00');
INSERT INTO queries (id, workspace_id, environment_id, fields, author, created_at, updated_at)
VALUES ('q_1', 'ws_1', 'env_1', '{"calculations": [{"operator": "COUNT"}]}', NULL,
  '2026-01-04 00:00:00', '2026-01-04 00:00:00');
INSERT INTO alerts (id, workspace_id, environment_id, query_id, name, created_at, updated_at,
  destinations, webhook_secret)
VALUES ('al_1', 'ws_1', 'env_1', 'q_1', 'errors', '2026-01-04 00:00:00', '2026-01-04 00:00:00',
  :destinations, 'll_ws_clearSecretOfAnEarlierVersion');
INSERT INTO alert_checks (id, alert_id, time, from_ms, to_ms, state, previous_state, "values",
  notifications)
VALUES ('ch_1', 'al_1', '2026-01-05 00:00:00', 0, 60000, 'ALARM', 'OK', '[]', :notifications);
"""


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def fresh(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MetaDB]:
    schemas = postgres_schema() if request.param == "postgres" else None
    url = next(schemas) if schemas else f"sqlite:///{tmp_path / 'meta.db'}"
    meta = MetaDB(url)
    try:
        yield meta
    finally:
        meta.dispose()
        if schemas:
            next(schemas, None)


def _outcome(kind: str, target: str) -> dict[str, Any]:
    return {"type": kind, "target": target, "ok": True, "status": 200, "error": None, "tries": 1}


HISTORY = [_outcome("slack", SLACK), _outcome("email", "oncall@example.com")]


def _clear_alert(db: MetaDB, hooks: WebhookReceiver) -> str:
    destinations = orjson.dumps(
        [
            {"type": "webhook", "url": hooks.url(f"/in/{HOOK_TOKEN}")},
            {"type": "slack", "url": SLACK},
        ]
    ).decode()
    values = {"destinations": destinations, "notifications": orjson.dumps(HISTORY).decode()}
    db.migrate("0008")
    with db.connection() as c:
        for statement in CLEAR_ROWS.split(";"):
            if statement.strip():
                c.execute(
                    text(statement), {k: v for k, v in values.items() if f":{k}" in statement}
                )
    return destinations


def test_the_migration_seals_the_secrets_an_earlier_version_stored_in_clear(
    fresh: MetaDB, tmp_path: Path, hooks: WebhookReceiver
) -> None:
    _clear_alert(fresh, hooks)
    fresh.migrate(sealer=Sealer(lambda: [KEY_A.encode()]))

    stored = " ".join(_stored(fresh, "al_1"))
    with fresh.connection() as c:
        history = str(c.execute(text("SELECT notifications FROM alert_checks")).scalar_one())
    for clear in ("sl4ckT0ken", HOOK_TOKEN, "clearSecretOfAnEarlierVersion"):
        assert clear not in stored
    assert "sl4ckT0ken" not in history and "oncall@example.com" in history
    alerts = _service(fresh, tmp_path, KEY_A)
    tenant = Tenant("ws_1", "env_1")
    assert [d["url"] for d in alerts.get(tenant, "al_1")["destinations"]] == [
        hooks.url(f"/in/{HOOK_TOKEN}"),
        SLACK,
    ]
    assert _signed_test(alerts, tenant, "al_1", hooks, "ll_ws_clearSecretOfAnEarlierVersion")
    [check] = alerts.checks(tenant, "al_1", 10, None)
    assert check["notifications"] == HISTORY


def test_the_migration_without_the_key_stops_and_changes_nothing(
    fresh: MetaDB, hooks: WebhookReceiver
) -> None:
    destinations = _clear_alert(fresh, hooks)
    with pytest.raises(RuntimeError, match="secret key"):
        fresh.migrate()
    with fresh.connection() as c:
        row = c.execute(text("SELECT destinations, webhook_secret FROM alerts")).one()
        version = c.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
    assert version == "0008"
    assert row[1] == "ll_ws_clearSecretOfAnEarlierVersion"
    # PostgreSQL's driver hands JSON back parsed; SQLite as its text.
    kept = row[0] if isinstance(row[0], list) else orjson.loads(row[0])
    assert kept == orjson.loads(destinations)
