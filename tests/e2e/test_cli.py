"""The operator's CLI: bootstrap, workspaces, environments and keys, as a user runs them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from tests.support import CLI, launch, run_cli

PASSWORD = "a long enough passphrase 42"


@dataclass
class Cli:
    """`limelight` on a data dir of its own (no server needed: metadata only)."""

    data_dir: Path

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(args, {**os.environ, "LIMELIGHT_DATA_DIR": str(self.data_dir)})

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
        # Printed again while the server runs: its addresses, on its own port.
        shown = cli.ok("bootstrap")
        assert f"{server.url}/events/v1/<dataset>" in shown and ":8000" not in shown
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
    # A name's escape sequence is shown as its code, not sent to the terminal.
    odd = cli.ok("workspaces", "create", "ti\x1b]0;tle\x07")
    assert "\x1b" not in odd and "ti\\x1b]0;tle\\x07" in odd


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


LOGO = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><rect width="8" height="8"/></svg>'
)


def _integration(cli: Cli, tmp: Path, name: str = "Acme Dashboards") -> dict[str, Any]:
    logo = tmp / "logo.svg"
    logo.write_text(LOGO)
    return cli.json(
        "integrations", "create", "--name", name, "--description", "Dashboards for your events",
        "--logo", str(logo), "--redirect-url", "https://acme.example/oauth/callback",
    )  # fmt: skip


@pytest.mark.parametrize("columns", ["80", "40"])
def test_ids_and_keys_are_never_cut(cli: Cli, tmp_path: Path, columns: str) -> None:
    """A table wider than the terminal is printed as records: every value whole on a line."""
    boot = cli.json("bootstrap")
    integration = _integration(cli, tmp_path, name="An integration with a rather long name")
    user = cli.json("users", "create", "--email", "somebody.with.a.long.address@example.com",
                    "--password", PASSWORD, "--workspace", "default")  # fmt: skip
    narrow = {**os.environ, "LIMELIGHT_DATA_DIR": str(cli.data_dir), "COLUMNS": columns}
    integrations, integration_shown, users, keys, workspaces, environments = in_a_terminal(
        narrow,
        ["integrations", "list"],
        ["integrations", "show", integration["clientId"]],
        ["users", "list"],
        ["keys", "list"],
        ["workspaces", "list"],
        ["environments", "list"],
    )
    assert integration["clientId"] in integrations.split()
    assert integration["clientId"] in integration_shown.split()
    assert user["userId"] in users.split()
    assert boot["ingestKey"] in keys.split()
    assert boot["workspaceId"] in workspaces.split()
    assert boot["environmentId"] in environments.split()
    assert not any("…" in word for word in keys.split() if not word.startswith("ll_sk_"))


# Commands one after the other in a process of their own, started with ``env``: the
# terminal's width is read from COLUMNS when the CLI is imported, as in a shell. One
# process for all (the runner's in-process invocation): 0.8 s of CPU per command saved.
_IN_A_TERMINAL = """
import json, sys
from typer.testing import CliRunner
from limelight.cli import app
outputs = []
for args in json.loads(sys.argv[1]):
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, (args, result.output)
    outputs.append(result.stdout)
print(json.dumps(outputs))
"""


def in_a_terminal(env: dict[str, str], *commands: list[str]) -> list[str]:
    """What each of ``commands`` prints, run in one process started with ``env``."""
    out = subprocess.run(
        [sys.executable, "-c", _IN_A_TERMINAL, json.dumps(commands)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    outputs: list[str] = json.loads(out.stdout)
    return outputs


def test_times_carry_their_zone(cli: Cli, tmp_path: Path) -> None:
    cli.json("bootstrap")
    _integration(cli, tmp_path)
    as_json = [
        *(w["createdAt"] for w in cli.json("workspaces", "list")),
        *(u["createdAt"] for u in cli.json("users", "list")),
        *(k["createdAt"] for k in cli.json("keys", "list")),
        *(i["createdAt"] for i in cli.json("integrations", "list")),
    ]
    assert len(as_json) == 5 and all(t.endswith("+00:00") for t in as_json)
    for command in (["workspaces", "list"], ["users", "list"], ["keys", "list"],
                    ["integrations", "list"]):  # fmt: skip
        times = re.findall(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S*", cli.ok(*command))
        assert times and all(t.endswith("+00:00") for t in times), (command, times)


def _failure(
    cli: Cli, *args: str, env: dict[str, str] | None = None, process: bool = False
) -> tuple[int, str]:
    """The exit code and stderr of a failing command; ``process``: as a process of its own."""
    full = {**os.environ, "LIMELIGHT_DATA_DIR": str(cli.data_dir), **(env or {})}
    if process:
        out = subprocess.run([*CLI, *args], env=full, capture_output=True, text=True, check=False)
    else:
        out = run_cli(args, full)
    assert "Traceback" not in out.stderr + out.stdout
    return out.returncode, out.stderr


def test_one_exit_code_per_kind_of_failure(cli: Cli) -> None:
    """1 refused or not found, 2 usage, 3 the installation cannot be used; one line each."""
    cli.json("workspaces", "create", "acme")
    cli.json("users", "create", "--email", "ann@acme.test", "--password", PASSWORD)
    refused = [
        ("workspaces", "create", "acme"),
        ("users", "create", "--email", "ann@acme.test", "--password", PASSWORD),
        ("keys", "revoke", "nope"),
        ("integrations", "show", "nope"),
        ("users", "create", "--email", "bob@acme.test", "--password", "short"),
    ]
    for args in refused:
        code, err = _failure(cli, *args)
        assert code == 1, (args, err)
        assert [line for line in err.splitlines() if line.startswith("error: ")], (args, err)
    usage = [
        ("keys", "create", "--kind", "root"),
        ("users", "create", "--email", "c@acme.test", "--password", "x", "--password-stdin"),
        ("workspaces", "frobnicate"),
    ]
    for args in usage:
        assert _failure(cli, *args)[0] == 2, args
    # These two as the user meets them: the exit code of a whole process.
    code, err = _failure(cli, "workspaces", "list", env={"LIMELIGHT_PORT": "eighty"}, process=True)
    assert code == 2 and "LIMELIGHT_PORT" in err
    unreachable = {"LIMELIGHT_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"}
    code, err = _failure(cli, "workspaces", "list", env=unreachable, process=True)
    assert code == 3 and "error: the metadata database cannot be used" in err


def test_datasets_retention_is_set_listed_and_refused_with_reasons(cli: Cli) -> None:
    cli.ok("workspaces", "create", "acme")
    cli.ok("environments", "create", "prod", "--workspace", "acme")
    cli.ok("workspaces", "create", "globex")
    cli.ok("environments", "create", "prod", "--workspace", "globex")
    # No event yet: a typo must not pass for a new dataset.
    unknown = cli.run("datasets", "retention", "prod", "audit", "400d", "--workspace", "acme")
    assert unknown.returncode == 1
    assert unknown.stderr.strip().splitlines()[-1] == (
        "error: environment 'prod' has no dataset 'audit' (it has no events yet); check the"
        " name, or add --create to set the retention of a dataset to come"
    )
    assert cli.json("datasets", "list", "prod", "--workspace", "acme")["datasets"] == []
    said = cli.ok(
        "datasets", "retention", "prod", "audit", "400d", "--workspace", "acme", "--create"
    )
    assert "audit keeps its events for 400d" in said
    cli.ok("datasets", "retention", "prod", "debug", "12h", "--workspace", "acme", "--create")
    # A dataset with a retention of its own is known from then on.
    cli.ok("datasets", "retention", "prod", "audit", "400d", "--workspace", "acme")
    assert cli.json("datasets", "list", "prod", "--workspace", "acme") == {
        "default": "30d",
        "datasets": [
            {"name": "audit", "retention": "400d", "retention_is_default": False},
            {"name": "debug", "retention": "12h", "retention_is_default": False},
        ],
    }
    # The other workspace's environment of the same name is untouched.
    assert cli.json("datasets", "list", "prod", "--workspace", "globex")["datasets"] == []

    back = cli.json("datasets", "retention", "prod", "debug", "default", "--workspace", "acme")
    assert back == {"name": "debug", "retention": "30d", "retention_is_default": True}
    refused = cli.run("datasets", "retention", "prod", "audit", "a week", "--workspace", "acme")
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines()[-1] == (
        'error: Invalid retention: a duration such as "30s", "5m", "1h" or "1d"'
    )
    assert "'nowhere'" in cli.fails("datasets", "list", "nowhere", "--workspace", "acme")


def _every_command() -> Iterator[tuple[str, Any]]:
    from typer.main import get_command

    from limelight.cli import app

    def walk(command: Any, ctx: Any, path: str) -> Iterator[tuple[str, Any]]:
        yield path, command
        for name in getattr(command, "list_commands", lambda _: [])(ctx):
            sub = command.get_command(ctx, name)  # the command itself, loaded
            yield from walk(
                sub, sub.make_context(name, [], resilient_parsing=True), f"{path} {name}"
            )

    root = get_command(app)
    yield from walk(root, root.make_context("limelight", [], resilient_parsing=True), "limelight")


def test_every_command_has_help() -> None:
    commands = dict(_every_command())
    assert len(commands) > 30
    assert [path for path, command in commands.items() if not command.help] == []


def test_the_root_lists_each_command_with_its_own_help() -> None:
    """The root lists its commands without importing them: its lines must stay theirs."""
    from limelight.cli.command import COMMANDS

    commands = dict(_every_command())
    for entry in COMMANDS:
        own = commands[f"limelight {entry.name}"].help.split("\n\n")[0]
        assert entry.help == " ".join(own.split()), entry.name


def test_help_imports_no_command_and_shows_no_types_of_flags() -> None:
    heavy = ("chdb", "fastapi", "starlette", "sqlalchemy", "uvicorn", "pydantic_settings",
             "alembic", "httpx", "argon2", "limelight.settings", "limelight.store",
             "limelight.cli.tenancy")  # fmt: skip
    probe = f"import sys, limelight.cli; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    imported = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert imported.stdout.strip() == "[]", imported.stdout
    # As a user runs it; the bound is generous (0.2-0.5 s measured on a busy machine,
    # 1.2-2.9 s when it imported every command).
    started = time.monotonic()
    shown = subprocess.run([*CLI, "--help"], capture_output=True, text=True, timeout=10)
    assert time.monotonic() - started < 5
    assert shown.returncode == 0
    assert "keys" in shown.stdout and "datasets" in shown.stdout
    flags = subprocess.run([*CLI, "keys", "create", "--help"], capture_output=True, text=True)
    assert "--json" in flags.stdout and "<bool>" not in flags.stdout + shown.stdout


def test_version() -> None:
    shown = subprocess.run([*CLI, "--version"], capture_output=True, text=True, check=True)
    assert shown.stdout == f"limelight {version('limelight')}\n"


def test_the_installation_is_named_on_stderr_and_json_stays_clean(cli: Cli) -> None:
    out = cli.run("workspaces", "list", "--json")
    assert json.loads(out.stdout) == []
    assert f"installation: data directory {cli.data_dir}" in out.stderr


def test_the_default_data_directory_does_not_depend_on_the_current_one(tmp_path: Path) -> None:
    """Without LIMELIGHT_DATA_DIR every directory reaches the same installation."""
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k not in ("LIMELIGHT_DATA_DIR", "XDG_DATA_HOME")}
    env["HOME"] = str(home)
    boots = []
    for where in ("a", "b/c"):
        cwd = tmp_path / where
        cwd.mkdir(parents=True)
        out = subprocess.run([*CLI, "bootstrap", "--json"], env=env, cwd=cwd,
                             capture_output=True, text=True, check=True)  # fmt: skip
        boots.append(json.loads(out.stdout))
        assert f"installation: data directory {home}/.local/share/limelight;" in out.stderr
    assert boots[0]["workspaceId"] == boots[1]["workspaceId"]
    assert boots[1]["adminKey"] is None  # made once, by the first
    assert (home / ".local/share/limelight/meta.db").exists()
    xdg = tmp_path / "xdg"
    out = subprocess.run([*CLI, "workspaces", "list"], env={**env, "XDG_DATA_HOME": str(xdg)},
                         capture_output=True, text=True, check=True)  # fmt: skip
    assert f"installation: data directory {xdg}/limelight;" in out.stderr


def test_keys_create_quiet_prints_the_key_alone(cli: Cli) -> None:
    cli.json("bootstrap")
    key = cli.ok("keys", "create", "--kind", "admin", "--quiet").strip()
    assert re.fullmatch(r"ll_sk_\S+", key)
