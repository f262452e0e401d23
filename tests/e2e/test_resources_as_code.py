"""``limelight plan``, ``apply`` and ``pull`` against a live server, over its HTTP API: a
folder applied twice changes nothing the second time, a change is planned as a diff naming
the resource, ``--prune`` deletes only what an apply made, ``pull`` writes files that plan
back to no change, and a folder with an error changes nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import web
from tests.support import LiveServer, Tenant, launch, run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "checkout"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # Email destinations (Baselime's example has some) need an SMTP server named; no
    # notification is sent in these tests.
    srv = launch(tmp_path_factory.mktemp("ascode"), {"LIMELIGHT_SMTP_HOST": "127.0.0.1"})
    yield srv
    srv.stop()


@pytest.fixture()
def tenant(server: LiveServer) -> Tenant:
    return server.new_tenant()


def cli(
    server: LiveServer, tenant: Tenant, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {"LIMELIGHT_URL": server.url, "LIMELIGHT_API_KEY": tenant.admin_key}
    return run_cli(list(args), {**server.env, **env}, stdin)


def listed(server: LiveServer, tenant: Tenant, kind: str) -> list[dict[str, Any]]:
    r = web.get(f"{server.url}/v1/{kind}", headers={"Authorization": tenant.admin_key})
    r.raise_for_status()
    found: list[dict[str, Any]] = r.json()[kind]
    return found


def copy(folder: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(folder, tmp_path / folder.name))


def test_apply_creates_the_folder_and_a_second_apply_changes_nothing(
    server: LiveServer, tenant: Tenant
) -> None:
    planned = cli(server, tenant, "plan", str(EXAMPLE))
    assert planned.returncode == 2, planned.stderr
    assert "+ query slow-checkouts" in planned.stdout
    assert "+ alert checkout-too-slow" in planned.stdout
    assert "+ board checkout" in planned.stdout
    assert "Plan: 3 to create, 0 to change, 0 to delete." in planned.stdout

    applied = cli(server, tenant, "apply", str(EXAMPLE), "--yes")
    assert applied.returncode == 0, applied.stderr
    [query] = listed(server, tenant, "queries")
    [alert] = listed(server, tenant, "alerts")
    assert query["name"] == "slow checkouts"
    assert alert["query_id"] == query["id"]
    assert alert["threshold"] == {"operation": ">", "value": 2000}
    [board] = listed(server, tenant, "boards")
    assert [(p["query_id"], p["visualization"], p["width"]) for p in board["panels"]] == [
        (query["id"], "bars", 3),
        (query["id"], "number", 1),
    ]
    assert f"created query slow-checkouts ({query['id']})" in applied.stdout
    assert "webhook secret" in applied.stdout
    # The query runs by its id in the folder, as by its name.
    for name in ("slow-checkouts", "slow checkouts"):
        ran = cli(server, tenant, "query", name, "--json")
        assert ran.returncode == 0, ran.stderr
        assert "aggregates" in json.loads(ran.stdout)

    again = cli(server, tenant, "plan", str(EXAMPLE))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "No changes" in again.stdout
    second = cli(server, tenant, "apply", str(EXAMPLE), "--yes")
    assert second.returncode == 0 and "No changes" in second.stdout
    assert len(listed(server, tenant, "queries")) == 1
    assert len(listed(server, tenant, "alerts")) == 1
    assert len(listed(server, tenant, "boards")) == 1


def test_a_changed_file_is_planned_as_a_diff_of_that_resource_and_applied(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    folder = copy(EXAMPLE, tmp_path)
    assert cli(server, tenant, "apply", str(folder), "--yes").returncode == 0
    [alert] = listed(server, tenant, "alerts")
    alerts = folder / "alerts.yml"
    alerts.write_text(alerts.read_text().replace("value: 2000", "value: 1500"))

    planned = cli(server, tenant, "plan", str(folder))
    assert planned.returncode == 2
    assert f"~ alert checkout-too-slow ({alert['id']})" in planned.stdout
    assert '- threshold: {"operation":">","value":2000}' in planned.stdout
    assert '+ threshold: {"operation":">","value":1500}' in planned.stdout
    assert "query slow-checkouts" not in planned.stdout  # unchanged: not shown
    assert "Plan: 0 to create, 1 to change, 0 to delete." in planned.stdout

    assert cli(server, tenant, "apply", str(folder), "--yes").returncode == 0
    [changed] = listed(server, tenant, "alerts")
    assert changed["id"] == alert["id"] and changed["threshold"]["value"] == 1500


def test_apply_asks_first_and_a_no_changes_nothing(server: LiveServer, tenant: Tenant) -> None:
    refused = cli(server, tenant, "apply", str(EXAMPLE), stdin="n\n")
    assert refused.returncode == 1
    assert "Apply these changes?" in refused.stdout
    assert listed(server, tenant, "queries") == []


def test_prune_deletes_only_what_an_apply_created(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    folder = copy(EXAMPLE, tmp_path)
    assert cli(server, tenant, "apply", str(folder), "--yes").returncode == 0
    by_hand = web.post(
        f"{server.url}/v1/queries",
        json={"name": "made in the console"},
        headers={"Authorization": tenant.admin_key},
    ).json()["query"]["id"]
    (folder / "alerts.yml").unlink()
    (folder / "boards.yml").unlink()
    (folder / "queries.yml").write_text("queries: {}\n")

    kept = cli(server, tenant, "plan", str(folder))
    assert kept.returncode == 0  # nothing to do without --prune
    assert "alert checkout-too-slow" in kept.stdout and "--prune deletes it" in kept.stdout

    planned = cli(server, tenant, "plan", str(folder), "--prune")
    assert planned.returncode == 2
    assert "- alert checkout-too-slow" in planned.stdout
    assert "- query slow-checkouts" in planned.stdout
    assert "- board checkout" in planned.stdout
    assert by_hand not in planned.stdout
    assert cli(server, tenant, "apply", str(folder), "--prune", "--yes").returncode == 0
    assert [q["id"] for q in listed(server, tenant, "queries")] == [by_hand]
    assert listed(server, tenant, "alerts") == []
    assert listed(server, tenant, "boards") == []


def test_pull_writes_files_that_plan_back_to_no_change(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    assert cli(server, tenant, "apply", str(EXAMPLE), "--yes").returncode == 0
    headers = {"Authorization": tenant.admin_key}
    made = web.post(
        f"{server.url}/v1/queries",
        json={"name": "errors", "calculations": [{"operator": "COUNT"}], "needle": {"value": "x"}},
        headers=headers,
    ).json()["query"]["id"]
    web.post(
        f"{server.url}/v1/alerts",
        json={"name": "errors", "query_id": made, "threshold": {"operation": ">=", "value": 0.5},
              "renotify": "1h", "enabled": False},
        headers=headers,
    )  # fmt: skip
    pulled = tmp_path / "pulled"
    out = cli(server, tenant, "pull", str(pulled))
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in pulled.iterdir()) == ["alerts.yml", "boards.yml", "queries.yml"]
    text = (pulled / "queries.yml").read_text()
    assert "slow-checkouts:" in text and f"{made}:" in text  # by managed id, else by id

    again = cli(server, tenant, "plan", str(pulled), "--prune")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "No changes" in again.stdout
    # Into a folder that is not empty: refused, nothing written.
    refused = cli(server, tenant, "pull", str(pulled))
    assert refused.returncode == 1 and "not an empty folder" in refused.stderr


BROKEN = {
    "yaml": ("queries:\n  a:\n    name: a: b\n", "queries.yml:3: not valid YAML"),
    "schema": (
        "queries:\n  a:\n    calculations:\n      - {operator: P42}\n",
        "queries.yml:4: queries.a.calculations[0].operator: 'P42' is not allowed",
    ),
    "reference": (
        "alerts:\n  a:\n    query: missing\n    threshold: {operation: '>', value: 1}\n",
        "queries.yml:3: alerts.a.query: no query 'missing' is declared in this folder",
    ),
    "validation": (
        "queries:\n  a:\n    calculations: [{operator: MAX}]\n",
        "queries.yml:3: queries.a.calculations[0].key: MAX needs a key",
    ),
    # Checked once the environment is read (a name it holds is taken unchanged): refused
    # before any change all the same.
    "name": (
        'queries:\n  a:\n    name: "two\\nlines"\n    calculations: [{operator: COUNT}]\n',
        "queries.yml:3: queries.a.name: must be one line, without control characters",
    ),
}


@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_file_with_an_error_is_refused_naming_file_line_and_field_and_nothing_changes(
    server: LiveServer, tenant: Tenant, tmp_path: Path, kind: str
) -> None:
    folder = copy(EXAMPLE, tmp_path)
    text, expected = BROKEN[kind]
    # One good file and one bad: the folder is refused whole.
    (folder / "queries.yml").rename(folder / "good.yml")
    (folder / "queries.yml").write_text(text)
    for command in (["plan"], ["apply", "--yes"]):
        out = cli(server, tenant, *command, str(folder))
        assert out.returncode == 1, (command, out.stdout)
        assert f"{folder}/{expected}" in out.stderr, out.stderr
        assert "nothing was changed" in out.stderr
    assert listed(server, tenant, "queries") == []
    assert listed(server, tenant, "alerts") == []
    assert listed(server, tenant, "boards") == []


def test_another_environment_sees_and_prunes_nothing_of_this_one(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    assert cli(server, tenant, "apply", str(EXAMPLE), "--yes").returncode == 0
    other = server.new_tenant()
    empty = tmp_path / "empty"
    empty.mkdir()
    out = cli(server, other, "apply", str(empty), "--prune", "--yes")
    assert out.returncode == 0 and "No changes" in out.stdout
    assert len(listed(server, tenant, "queries")) == 1


def test_a_baselime_folder_from_its_documentation_is_applied_as_it_is(
    server: LiveServer, tenant: Tenant
) -> None:
    folder = ROOT / "tests" / "fixtures" / "baselime-docs"
    planned = cli(server, tenant, "plan", str(folder))
    assert planned.returncode == 2, planned.stderr
    applied = cli(server, tenant, "apply", str(folder), "--yes")
    assert applied.returncode == 0, applied.stderr
    queries = {q["name"] if "name" in q else q["description"][:20]: q for q in
               listed(server, tenant, "queries")}  # fmt: skip
    assert len(queries) == 2
    [alert] = listed(server, tenant, "alerts")
    assert alert["threshold"] == {"operation": ">", "value": 50}  # {{ threshold }}'s default
    assert (alert["frequency"], alert["window"]) == ("5m", "15m")
    assert alert["calculation"] == "AVG(event.duration)"  # the query's first
    assert alert["destinations"] == [
        {"type": "slack", "url": "https://hooks.slack.com/services/T000/B000/XXXX"},
        {"type": "webhook", "url": "https://example.com/alerts"},
        {"type": "email", "to": ["alerts@example.com", "ops@example.com"]},
    ]
    [board] = listed(server, tenant, "boards")
    assert [p["visualization"] for p in board["panels"]] == ["line", "table"]
    again = cli(server, tenant, "plan", str(folder))
    assert again.returncode == 0, again.stdout


def test_login_saves_a_profile_for_the_user_alone_that_later_commands_use(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    env = {k: v for k, v in server.env.items() if not k.startswith("LIMELIGHT_API_KEY")}
    env |= {"XDG_CONFIG_HOME": str(tmp_path)}
    out = run_cli(["login", "--url", server.url], env, stdin=f"{tenant.admin_key}\n")
    assert out.returncode == 0, out.stderr
    saved = tmp_path / "limelight" / "profiles.json"
    assert saved.stat().st_mode & 0o777 == 0o600
    assert tenant.admin_key not in out.stdout  # asked without echo, never printed
    assert run_cli(["plan", str(EXAMPLE)], env).returncode == 2  # the profile's server and key

    wrong = run_cli(["login", "--url", server.url, "--profile", "x"], env, stdin="ll_sk_nope\n")
    assert wrong.returncode == 1 and "does not accept this key" in wrong.stderr
    ingest = run_cli(
        ["login", "--url", server.url, "--profile", "x"], env, stdin=f"{tenant.ingest_key}\n"
    )
    assert ingest.returncode == 1 and "admin key" in ingest.stderr
    assert '"x"' not in saved.read_text()


def test_pruning_a_query_that_something_kept_still_uses_is_refused_before_any_change(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    folder = copy(EXAMPLE, tmp_path)
    assert cli(server, tenant, "apply", str(folder), "--yes").returncode == 0
    [query] = listed(server, tenant, "queries")
    by_hand = web.post(
        f"{server.url}/v1/alerts",
        json={"name": "mine", "query_id": query["id"], "threshold": {"operation": ">", "value": 1}},
        headers={"Authorization": tenant.admin_key},
    ).json()["alert"]["id"]
    (folder / "alerts.yml").unlink()
    (folder / "boards.yml").unlink()
    (folder / "queries.yml").write_text("queries: {}\n")
    out = cli(server, tenant, "apply", str(folder), "--prune", "--yes")
    assert out.returncode == 1
    assert f"the query slow-checkouts cannot be deleted: the alert {by_hand}" in out.stderr
    # Nothing was changed: the apply's own alert is still there too.
    assert len(listed(server, tenant, "alerts")) == 2
