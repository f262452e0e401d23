"""The operator's CLI: bootstrap, workspaces, environments and keys, as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import CLI, launch

PASSWORD = "a long enough passphrase 42"


@dataclass
class Cli:
    """`limelight` on a data dir of its own (no server needed: metadata only)."""

    data_dir: Path

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "LIMELIGHT_DATA_DIR": str(self.data_dir)}
        return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, check=False)

    def ok(self, *args: str) -> str:
        out = self.run(*args)
        assert out.returncode == 0, out.stderr
        return out.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args, "--json"))

    def fails(self, *args: str) -> str:
        out = self.run(*args)
        assert out.returncode != 0
        assert "Traceback" not in out.stderr + out.stdout
        return out.stderr + out.stdout


@pytest.fixture()
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path / "data")


def test_bootstrap_json_shape_and_idempotence(cli: Cli) -> None:
    first = cli.json("bootstrap")
    assert {"workspaceId", "environmentId", "ingestKey", "adminKey"} <= set(first)
    assert first["ingestKey"].startswith("ll_pk_")
    assert first["adminKey"].startswith("ll_sk_")

    again = cli.json("bootstrap")
    third = cli.json("bootstrap")
    for later in (again, third):
        assert later["workspaceId"] == first["workspaceId"]
        assert later["environmentId"] == first["environmentId"]
        assert later["ingestKey"] == first["ingestKey"]  # public keys can be shown again
        assert later["adminKey"] is None  # admin keys are shown once

    assert [w["name"] for w in cli.json("workspaces", "list")] == ["default"]
    envs = cli.json("environments", "list")
    assert [(e["name"], e["workspaceId"]) for e in envs] == [("prod", first["workspaceId"])]
    listed = cli.json("keys", "list")
    assert sorted(k["kind"] for k in listed) == ["admin", "ingest"]


def test_bootstrap_keys_work_on_the_server(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "data")
    boot = cli.json("bootstrap")
    server = launch(tmp_path / "data")
    try:
        assert server.send(boot["ingestKey"], "logs", [{"hello": "world"}]).status_code == 202
        stored = server.read(boot["adminKey"], "logs")
        assert [e["hello"] for e in stored] == ["world"]
    finally:
        server.stop()
    # The server found a bootstrapped database and made nothing new.
    assert len(cli.json("keys", "list")) == 2


def test_bootstrap_prints_keys_and_urls_for_people(cli: Cli) -> None:
    out = cli.ok("bootstrap")
    ingest = cli.json("bootstrap")["ingestKey"]
    assert "ll_sk_" in out  # the admin key, this once
    assert ingest in out
    assert "/events/v1/<dataset>" in out
    later = cli.ok("bootstrap")
    assert ingest in later
    assert "ll_sk_" in later and "…" in later  # only the admin key's display form now


def test_workspaces_create_and_list(cli: Cli) -> None:
    a = cli.json("workspaces", "create", "acme")
    b = cli.json("workspaces", "create", "globex")
    assert a["name"] == "acme" and a["workspaceId"] != b["workspaceId"]
    listed = {w["name"]: w["workspaceId"] for w in cli.json("workspaces", "list")}
    assert listed == {"acme": a["workspaceId"], "globex": b["workspaceId"]}
    assert "globex" in cli.ok("workspaces", "list")

    message = cli.fails("workspaces", "create", "acme")
    assert "acme" in message and "exists" in message


def test_environments_create_and_list(cli: Cli) -> None:
    a = cli.json("workspaces", "create", "acme")["workspaceId"]
    b = cli.json("workspaces", "create", "globex")["workspaceId"]
    prod = cli.json("environments", "create", "prod", "--workspace", "acme")
    dev = cli.json("environments", "create", "dev", "--workspace", a, "--no-redact")
    other = cli.json("environments", "create", "prod", "--workspace", b)  # same name elsewhere
    assert prod["workspaceId"] == dev["workspaceId"] == a
    assert (prod["redactSecrets"], dev["redactSecrets"]) == (True, False)

    in_a = cli.json("environments", "list", "--workspace", "acme")
    assert {(e["name"], e["redactSecrets"]) for e in in_a} == {("prod", True), ("dev", False)}
    everywhere = cli.json("environments", "list")
    assert {e["environmentId"] for e in everywhere} == {
        prod["environmentId"],
        dev["environmentId"],
        other["environmentId"],
    }

    refused = cli.fails("environments", "create", "prod", "--workspace", "acme")
    assert "'acme'" in refused and "'prod'" in refused
    assert "nowhere" in cli.fails("environments", "create", "x", "--workspace", "nowhere")


def test_keys_create_list_and_revoke(cli: Cli) -> None:
    cli.json("workspaces", "create", "acme")
    env = cli.json("environments", "create", "prod", "--workspace", "acme")
    cli.json("users", "create", "--email", "ann@acme.test", "--password", PASSWORD,
             "--workspace", "acme")  # fmt: skip
    where = ["--workspace", "acme", "--environment", "prod"]
    ingest = cli.json("keys", "create", "--kind", "ingest", "--name", "web", *where)
    admin = cli.json("keys", "create", "--kind", "admin", *where)
    assert ingest["key"].startswith("ll_pk_") and admin["key"].startswith("ll_sk_")
    assert ingest["environmentId"] == admin["environmentId"] == env["environmentId"]

    listed = {k["id"]: k for k in cli.json("keys", "list", *where)}
    assert set(listed) == {ingest["id"], admin["id"]}
    assert listed[ingest["id"]]["key"] == ingest["key"]  # public: shown again
    assert listed[ingest["id"]]["name"] == "web"
    assert listed[admin["id"]]["key"] is None  # secret: never shown again
    assert listed[admin["id"]]["display"].endswith(admin["key"][-4:])
    assert admin["key"] not in cli.ok("keys", "list")
    assert admin["key"] not in json.dumps(cli.json("keys", "list"))

    revoked = cli.json("keys", "revoke", admin["id"])
    assert revoked["revokedAt"]
    # Revoking again changes nothing.
    assert cli.json("keys", "revoke", admin["id"])["revokedAt"] == revoked["revokedAt"]
    after = {k["id"]: k for k in cli.json("keys", "list", "--workspace", "acme")}
    assert after[admin["id"]]["revokedAt"] == revoked["revokedAt"]
    assert after[ingest["id"]]["revokedAt"] is None

    assert "nope" in cli.fails("keys", "revoke", "nope")
    assert "kind" in cli.fails("keys", "create", "--kind", "root", *where)
    assert "nowhere" in cli.fails(
        "keys", "create", "--workspace", "acme", "--environment", "nowhere"
    )


def test_admin_keys_act_for_a_member_of_the_workspace(cli: Cli) -> None:
    """The owner of an admin key is the author of the queries it saves."""
    cli.json("workspaces", "create", "acme")
    cli.json("environments", "create", "prod", "--workspace", "acme")
    where = ["--workspace", "acme", "--environment", "prod"]
    refused = cli.fails("keys", "create", "--kind", "admin", *where)
    assert "workspace 'acme' has no user to own an admin key" in refused
    assert "limelight users create --email EMAIL --password-stdin --workspace acme" in refused

    ann = cli.json("users", "create", "--email", "ann@acme.test", "--password", PASSWORD,
                   "--workspace", "acme")  # fmt: skip
    bob = cli.json("users", "create", "--email", "bob@acme.test", "--password", PASSWORD)
    assert cli.json("keys", "create", "--kind", "admin", *where)["userId"] == ann["userId"]
    refused = cli.fails("keys", "create", "--kind", "admin", "--user", "bob@acme.test", *where)
    assert "bob@acme.test is not a member of workspace 'acme'" in refused
    cli.ok("users", "add-to-workspace", "bob@acme.test", "acme")
    owned = cli.json("keys", "create", "--kind", "admin", "--user", bob["userId"], *where)
    assert owned["userId"] == bob["userId"]
    assert "--user" in cli.fails("keys", "create", "--kind", "ingest", "--user", "ann", *where)
    assert cli.json("keys", "create", "--kind", "ingest", *where)["userId"] is None


def test_a_workspace_without_members_gets_the_operators_account(cli: Cli) -> None:
    admin = cli.json("bootstrap")["adminEmail"]
    cli.json("workspaces", "create", "beta")
    cli.json("environments", "create", "prod", "--workspace", "beta")
    key = cli.json("keys", "create", "--kind", "admin", "--workspace", "beta")
    users = {u["email"]: u for u in cli.json("users", "list")}
    assert key["userId"] == users[admin]["userId"]
    assert "beta" in users[admin]["workspaces"]
