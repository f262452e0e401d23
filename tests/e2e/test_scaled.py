"""Two API processes over one PostgreSQL and one ClickHouse (the double): what one
process counts or holds, the other sees. Requests go to the process each step names."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import web
from tests.alert_support import webhook_receiver
from tests.e2e.oauth_support import Browser, new_user, post_forms
from tests.support import (
    CLI,
    NO_BOUNDARY_BEFORE_2033,
    LiveServer,
    access_pids,
    launch_pair,
    launch_scaled,
    within_one_window,
)

RUNS_PER_MINUTE = 4
FAILURES_PER_ACCOUNT = 5
ALERT_TESTS_PER_MINUTE = 3


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[LiveServer]]:
    servers = launch_pair(
        Path(tmp_path_factory.mktemp("pair")),
        {
            "LIMELIGHT_QUERY_RUNS_PER_MINUTE": str(RUNS_PER_MINUTE),
            "LIMELIGHT_AUTH_FAILURES_PER_ACCOUNT": str(FAILURES_PER_ACCOUNT),
            "LIMELIGHT_AUTH_FAILURE_WINDOW": str(NO_BOUNDARY_BEFORE_2033),
            "LIMELIGHT_ALERT_TESTS_PER_MINUTE": str(ALERT_TESTS_PER_MINUTE),
        },
    )
    yield servers
    for server in servers:
        server.stop()


def _window() -> dict[str, int]:
    now = int(time.time() * 1000)
    return {"from": now - 3_600_000, "to": now + 1}


def test_run_creations_are_counted_once_for_the_deployment(pair: list[LiveServer]) -> None:
    a, b = pair
    tenant = a.new_tenant()
    body = {"query": {"calculations": [{"operator": "COUNT"}]}, **_window()}
    statuses = []
    within_one_window(10)
    for i in range(RUNS_PER_MINUTE + 2):
        server = pair[i % 2]
        r = web.post(
            f"{server.url}/v1/query_run", json=body, headers={"Authorization": tenant.admin_key}
        )
        statuses.append(r.status_code)
    assert statuses == [200] * RUNS_PER_MINUTE + [429, 429]
    assert b.url != a.url


def test_test_notifications_are_counted_once_for_the_deployment(pair: list[LiveServer]) -> None:
    a, _ = pair
    headers = {"Authorization": a.new_tenant().admin_key}
    query = {"calculations": [{"operator": "COUNT"}]}
    query_id = web.post(f"{a.url}/v1/queries", json=query, headers=headers).json()["query"]["id"]
    alert = {"name": "tested", "query_id": query_id, "threshold": {"operation": ">", "value": 0}}
    alert_id = web.post(f"{a.url}/v1/alerts", json=alert, headers=headers).json()["alert"]["id"]
    within_one_window(10)
    statuses = [
        web.post(f"{pair[i % 2].url}/v1/alerts/{alert_id}/test", headers=headers).status_code
        for i in range(ALERT_TESTS_PER_MINUTE + 2)
    ]
    assert statuses == [200] * ALERT_TESTS_PER_MINUTE + [429, 429]


def test_a_run_made_on_one_process_is_answered_by_the_other(pair: list[LiveServer]) -> None:
    a, b = pair
    tenant = b.new_tenant()
    events = [{"message": "hello", "duration": d} for d in (10, 20, 30)]
    assert a.send(tenant.ingest_key, "logs", events).status_code == 202
    headers = {"Authorization": tenant.admin_key}
    body = {"query": {"calculations": [{"operator": "SUM", "key": "duration"}]}, **_window()}
    created = web.post(f"{a.url}/v1/query_run", json=body, headers=headers).json()
    run_id = created["query_run"]["id"]
    # The other process holds no live run: it waits on the record until the run settles.
    answer = web.get(f"{b.url}/v1/query_run/{run_id}?wait=10", headers=headers, timeout=30)
    assert answer.status_code == 200
    run = answer.json()
    assert run["query_run"]["status"] == "COMPLETED"
    assert run["data"]["aggregates"][0]["values"]["SUM(duration)"] == 60
    again = web.get(f"{a.url}/v1/query_run/{run_id}", headers=headers).json()
    assert again["data"]["aggregates"] == run["data"]["aggregates"]


def test_failed_logins_are_counted_once_for_the_deployment(pair: list[LiveServer]) -> None:
    a, _ = pair
    email, _ = new_user(a)
    answers = []
    for i in range(FAILURES_PER_ACCOUNT + 2):
        browser = Browser(pair[i % 2])
        page = browser.client.get("/login")
        form = dict(post_forms(page.text, "/login")[0].fields)
        answer = browser.client.post("/login", data=form | {"email": email, "password": "wrong"})
        answers.append(answer.status_code)
        browser.close()
    assert answers == [401] * FAILURES_PER_ACCOUNT + [429, 429]


def rounds(server: LiveServer) -> float:
    """The rounds the server's alert evaluator has gone (its process's /metrics)."""
    text = web.get(f"{server.url}/metrics").text
    match = re.search(r"^limelight_alert_evaluator_rounds_total (\S+)$", text, re.MULTILINE)
    assert match, "no limelight_alert_evaluator_rounds_total in /metrics"
    return float(match.group(1))


def test_two_evaluators_check_an_alert_once_per_due_time(pair: list[LiveServer]) -> None:
    a, b = pair
    tenant = a.new_tenant()
    headers = {"Authorization": tenant.admin_key}
    query = {"calculations": [{"operator": "COUNT"}]}
    query_id = web.post(f"{a.url}/v1/queries", json=query, headers=headers).json()["query"]["id"]
    alert = {"name": "once", "query_id": query_id, "threshold": {"operation": ">", "value": 0}}
    alert_id = web.post(f"{b.url}/v1/alerts", json=alert, headers=headers).json()["alert"]["id"]
    deadline = time.monotonic() + 15
    checks: list[object] = []
    while not checks and time.monotonic() < deadline:
        time.sleep(0.2)
        checks = web.get(f"{a.url}/v1/alerts/{alert_id}/checks", headers=headers).json()["checks"]
    # Both evaluators go round twice more after the first check: each has seen the
    # alert when it was no longer due.
    since = [rounds(server) for server in pair]
    deadline = time.monotonic() + 30
    while any(rounds(server) < seen + 2 for server, seen in zip(pair, since, strict=True)):
        assert time.monotonic() < deadline, "an evaluator stopped going round"
        time.sleep(0.1)
    checks = web.get(f"{b.url}/v1/alerts/{alert_id}/checks", headers=headers).json()["checks"]
    assert len(checks) == 1  # due again only a minute later


def test_processes_starting_together_on_fresh_stores_all_serve(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """serve --workers 6 on an empty PostgreSQL schema and an empty ClickHouse: the
    processes take turns bringing the stores up to date, and every one of them serves
    (one that failed its start would stop the whole server)."""
    server = launch_scaled(Path(tmp_path_factory.mktemp("together")), workers=6)
    try:
        tenant = server.new_tenant()
        served_by: set[int] = set()
        # The server answers once one process is up; the others may still be starting on
        # a busy machine, so after 60 sends, rounds of 30 go on until three have served
        # (10 rounds at most).
        for round_ in range(10):
            for _ in range(30):  # a new connection each: any process may accept it
                assert server.send(tenant.ingest_key, "logs", [{"n": 1}]).status_code == 202
            log = server.log_path.read_text()
            served_by = access_pids(line for line in log.splitlines() if "POST /events" in line)
            if round_ >= 1 and len(served_by) >= 3:
                break
        assert "startup failed" not in log
        assert len(served_by) >= 3, served_by  # the processes are up, not one left alone
        assert server.proc is not None and server.proc.poll() is None
    finally:
        server.stop()


def test_the_notification_quota_is_the_deployments_whichever_worker_sends(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """API processes leave alerts to `limelight worker`; a workspace allowed one
    notification a minute gets one, though a second worker (here: after the first has
    stopped) checks its second alert."""
    with webhook_receiver() as hooks:
        server = launch_scaled(
            Path(tmp_path_factory.mktemp("workers")),
            {
                "LIMELIGHT_ALERTS_EVALUATE": "false",
                "LIMELIGHT_ALERT_NOTIFICATIONS_PER_MINUTE": "1",
                "LIMELIGHT_DESTINATION_ALLOW_NETWORKS": "127.0.0.0/8",
            },
            workers=1,
        )
        try:
            tenant = server.new_tenant()
            assert server.send(tenant.ingest_key, "logs", [{"n": 1}]).status_code == 202
            api = web.Client(base_url=server.url, headers={"Authorization": tenant.admin_key})
            query = {"calculations": [{"operator": "COUNT"}]}
            query_id = api.post("/v1/queries", json=query).json()["query"]["id"]

            def firing_alert(name: str) -> str:
                alert = {
                    "name": name,
                    "query_id": query_id,
                    "threshold": {"operation": ">", "value": 0},
                    "window": "1h",
                    "destinations": [{"type": "webhook", "url": hooks.url(f"/{name}")}],
                }
                answer = api.post("/v1/alerts", json=alert)
                assert answer.status_code == 200, answer.text
                return str(answer.json()["alert"]["id"])

            def checked_by_a_worker(alert_id: str, sent_to: str | None) -> dict[str, object]:
                """The alert's check by a worker of its own, which is killed once the
                check is recorded and, when one is ``sent_to`` a path, delivered: how
                fast a worker stops is not this test's question (a graceful stop waits
                for a tick in progress, and took over 10 s on a loaded machine)."""
                worker = subprocess.Popen(
                    [*CLI, "worker"], env=server.env, stderr=subprocess.DEVNULL
                )
                try:
                    deadline = time.monotonic() + 30
                    while not (checks := api.get(f"/v1/alerts/{alert_id}/checks").json()["checks"]):
                        assert time.monotonic() < deadline, "no worker checked the alert"
                        time.sleep(0.2)
                    if sent_to is not None:
                        assert len(hooks.wait_for(sent_to, 1, timeout=30)) == 1
                finally:
                    worker.kill()
                    worker.wait(10)
                return dict(checks[0])

            # Two workers' starts and checks, all in one minute of the quota: 3.7 s on
            # a quiet machine, at least 7 s in one run of the suite, so 30 s leaves
            # room for a busier one (40 s waited 13 s on average, and up to 40).
            within_one_window(30)
            minute = time.time() // 60
            first = checked_by_a_worker(firing_alert("first"), sent_to="/first")
            assert first["state"] == "ALARM"
            second = checked_by_a_worker(firing_alert("second"), sent_to=None)
            crossed = time.time() // 60 != minute
            assert second["state"] == "ALARM"
            # The check records what it did with the notification: not sent, and why.
            [note] = second["notifications"]
            recorded = not note["pending"] and note["error"].startswith(
                "not sent: the workspace sent more than"
            )
            assert recorded, (
                "the checks crossed into the next minute: over 30 s on this machine"
                if crossed
                else f"a second notification in one minute: {note}"
            )
            assert hooks.on("/second") == [], (
                "the checks crossed into the next minute: over 30 s on this machine"
                if crossed
                else "a second notification in one minute"
            )
        finally:
            server.stop()
