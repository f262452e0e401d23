"""``limelight backup`` while serving, ``limelight restore`` into a fresh data directory:
every event and every query comes back."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests import web
from tests.support import CLI, LiveServer, launch


def limelight(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LIMELIGHT_DATA_DIR": str(data_dir)}
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, check=False)


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
