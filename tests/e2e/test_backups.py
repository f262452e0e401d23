"""``limelight backup`` while serving, ``limelight restore`` into a fresh data directory:
every event and every query comes back."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

from limelight.alerts.service import AlertService
from limelight.settings import Settings
from limelight.store.meta import queries_repo, repos
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant
from tests import web
from tests.alert_support import webhook_receiver
from tests.support import CLI, LiveServer, launch, run_cli


def limelight(
    data_dir: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The command in a process of its own, forked from one that imported the app (each
    of backup and restore holds the engine)."""
    return run_cli(list(args), {**os.environ, **(env or {}), "LIMELIGHT_DATA_DIR": str(data_dir)})


def queries(server: LiveServer, admin_key: str) -> list[Any]:
    answer = web.get(f"{server.url}/v1/queries", headers={"Authorization": admin_key})
    answer.raise_for_status()
    return sorted(answer.json()["queries"], key=lambda q: q["id"])


def test_a_backup_made_while_serving_restores_every_event_and_query(tmp_path: Path) -> None:
    source = launch(tmp_path / "source")
    try:
        tenant = source.new_tenant()
        for batch in range(3):
            events = [{"n": batch * 100 + i, "data": {"userId": f"u-{i % 7}"}} for i in range(100)]
            assert source.send(tenant.ingest_key, "logs", events).status_code == 202
        assert source.send(tenant.ingest_key, "spans", [{"name": "GET /"}]).status_code == 202
        headers = {"Authorization": tenant.admin_key}
        for name in ("slow", "by user"):
            body = {"name": name, "calculations": [{"operator": "COUNT"}],
                    "group_bys": [{"key": "data.userId"}]}  # fmt: skip
            assert web.post(f"{source.url}/v1/queries", json=body, headers=headers).is_success
        saved = queries(source, tenant.admin_key)
        stored = source.read(tenant.admin_key)

        made = limelight(source.data_dir, "backup", str(tmp_path / "backup"), "--json")
        assert made.returncode == 0, made.stderr
        assert owner_only(tmp_path / "backup") == []
        assert json.loads(made.stdout)["events"] == 301
        assert f"installation: data directory {source.data_dir}" in made.stderr
        # What comes after the backup is not in it.
        assert source.send(tenant.ingest_key, "logs", [{"late": True}]).status_code == 202

        held = limelight(source.data_dir, "restore", str(tmp_path / "backup"))
        assert held.returncode == 3 and "is in use by limelight serve" in held.stderr
    finally:
        source.stop()

    restored = limelight(tmp_path / "restored", "restore", str(tmp_path / "backup"))
    assert restored.returncode == 0, restored.stderr
    again = limelight(tmp_path / "restored", "restore", str(tmp_path / "backup"))
    assert again.returncode == 1 and "already holds an installation" in again.stderr

    target = launch(tmp_path / "restored")
    try:
        assert target.read(tenant.admin_key) == stored
        assert queries(target, tenant.admin_key) == saved
        assert target.send(tenant.ingest_key, "logs", [{"after": "restore"}]).status_code == 202
        assert len(target.read(tenant.admin_key, "logs")) == 301
    finally:
        target.stop()

    # Without a server, the CLI makes the backup itself.
    offline = limelight(tmp_path / "restored", "backup", str(tmp_path / "offline"), "--json")
    assert offline.returncode == 0, offline.stderr
    assert json.loads(offline.stdout)["events"] == 302


def test_the_server_mode_is_sent_to_its_own_tools(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "LIMELIGHT_DATA_DIR": str(tmp_path),
        "LIMELIGHT_EVENTS_BACKEND": "clickhouse",
    }
    for command in ("backup", "restore"):
        out = subprocess.run([*CLI, command, str(tmp_path / "b")], env=env, capture_output=True,
                             text=True, check=False)  # fmt: skip
        assert out.returncode == 1
        assert "in the server mode use ClickHouse's BACKUP and pg_dump" in out.stderr


def owner_only(root: Path) -> list[str]:
    """Whatever under ``root`` (itself included) is not 0700 for a folder, 0600 for a file."""
    wrong = []
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode != (0o700 if path.is_dir() else 0o600):
            wrong.append(f"{path.relative_to(root)}: {mode:o}")
    return wrong


def alert_with_secrets(data_dir: Path, env: dict[str, str], hook: str) -> tuple[Tenant, str, str]:
    """An alert of a new tenant whose destinations hold secrets: (tenant, id, signing secret)."""
    settings = Settings(
        data_dir=data_dir,
        secret_key=env.get("LIMELIGHT_SECRET_KEY"),
        destination_allow_networks="127.0.0.0/8",
    )
    meta = MetaDB(settings.resolved_database_url)
    try:
        meta.migrate()
        with meta.session(immediate=True) as s:
            ws = repos.create_workspace(s, "team")
            tenant = Tenant(ws.id, repos.create_environment(s, ws, "prod", redact=False).id)
            query = {"calculations": [{"operator": "COUNT"}]}
            query_id = queries_repo.create_query(s, tenant, query, "u").id
        body = {
            "name": "errors",
            "query_id": query_id,
            "threshold": {"operation": ">", "value": 1},
            "destinations": [{"type": "webhook", "url": hook}, {"type": "slack", "url": SLACK}],
        }
        created = AlertService(settings, meta).create(tenant, body, "u")
    finally:
        meta.dispose()
    return tenant, created["id"], created["webhook_secret"]


SLACK = "https://hooks.slack.com/services/T0001/B0001/sl4ckT0ken"


def test_a_backup_is_its_owners_alone_and_restores_readable_secrets(tmp_path: Path) -> None:
    source = tmp_path / "source"
    with webhook_receiver() as hooks:
        tenant, alert_id, secret = alert_with_secrets(source, {}, hooks.url("/restored"))
        made = limelight(source, "backup", str(tmp_path / "backup"))
        assert made.returncode == 0, made.stderr
        assert owner_only(tmp_path / "backup") == []
        assert any((tmp_path / "backup" / "events").rglob("*"))  # the engine's files checked too
        assert b"sl4ckT0ken" not in (tmp_path / "backup" / "meta.db").read_bytes()

        restored = limelight(tmp_path / "restored", "restore", str(tmp_path / "backup"))
        assert restored.returncode == 0, restored.stderr
        # The restored installation opens the secrets with the key the backup carried.
        settings = Settings(
            data_dir=tmp_path / "restored", destination_allow_networks="127.0.0.0/8"
        )
        meta = MetaDB(settings.resolved_database_url)
        try:
            alerts = AlertService(settings, meta)
            shown = alerts.get(tenant, alert_id)["destinations"]
            assert [d["url"] for d in shown] == [hooks.url("/restored"), SLACK]
            assert alerts.send_test(tenant, alert_id)[0]["ok"]
        finally:
            meta.dispose()
        [received] = hooks.wait_for("/restored", 1)
        assert received.signed_by(secret)


def test_a_backup_sealed_with_a_key_of_the_environment_restores_with_that_key(
    tmp_path: Path,
) -> None:
    key = {"LIMELIGHT_SECRET_KEY": "the-operators-own-secret-key-0123456789abcdef"}
    source = tmp_path / "source"
    tenant, alert_id, _ = alert_with_secrets(source, key, "https://hooks.example.com/in")
    made = limelight(source, "backup", str(tmp_path / "backup"), env=key)
    assert made.returncode == 0, made.stderr
    assert not (tmp_path / "backup" / "secret.key").exists()

    # Another key opens nothing: refused, saying so, and the data directory stays fresh.
    refused = limelight(tmp_path / "restored", "restore", str(tmp_path / "backup"))
    assert refused.returncode != 0
    assert "sealed with another secret key" in refused.stderr
    assert "LIMELIGHT_SECRET_KEY" in refused.stderr
    assert not (tmp_path / "restored" / "meta.db").exists()
    assert not (tmp_path / "restored" / "secret.key").exists()

    again = limelight(tmp_path / "restored", "restore", str(tmp_path / "backup"), env=key)
    assert again.returncode == 0, again.stderr
    settings = Settings(data_dir=tmp_path / "restored", secret_key=key["LIMELIGHT_SECRET_KEY"])
    meta = MetaDB(settings.resolved_database_url)
    try:
        shown = AlertService(settings, meta).get(tenant, alert_id)["destinations"]
    finally:
        meta.dispose()
    assert shown[1] == {"type": "slack", "url": SLACK}
