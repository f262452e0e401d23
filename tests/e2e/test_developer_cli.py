"""``limelight query``, ``tail`` and ``send`` against a live server, over its HTTP API."""

from __future__ import annotations

import json
import select
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests import web
from tests.support import CLI, LiveServer, Tenant, launch, run_cli


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    srv = launch(tmp_path_factory.mktemp("developer"))
    yield srv
    srv.stop()


@pytest.fixture()
def tenant(server: LiveServer) -> Tenant:
    return server.new_tenant()


def env_of(server: LiveServer, tenant: Tenant) -> dict[str, str]:
    return {**server.env, "LIMELIGHT_URL": server.url, "LIMELIGHT_API_KEY": tenant.admin_key}


def cli(server: LiveServer, tenant: Tenant, *args: str, stdin: str | None = None) -> Any:
    return run_cli(list(args), env_of(server, tenant), stdin)


EVENTS = [
    {"level": "error", "message": "timeout", "duration": 900, "service": "checkout"},
    {"level": "error", "message": "timeout", "duration": 100, "service": "checkout"},
    {"level": "error", "message": "refused", "duration": 50, "service": "search"},
    {"level": "info", "message": "ok", "duration": 5000, "service": "checkout"},
]


def test_send_batches_a_file_and_reports_the_events_refused_by_line(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    lines = [json.dumps({"n": i}) for i in range(2500)]
    lines[10] = "{not json"
    lines[20] = "[1, 2]"  # JSON, but not an event: the server refuses it
    path = tmp_path / "events.ndjson"
    path.write_text("\n".join(lines) + "\n")
    out = cli(server, tenant, "send", "logs", str(path))
    assert out.returncode == 1
    assert "sent 2498 events to logs" in out.stdout
    assert "line/element 11: not valid JSON" in out.stderr
    assert "line/element 21:" in out.stderr
    assert "2 events were refused" in out.stderr
    assert len(server.read(tenant.admin_key, "logs", limit=10_000)) == 2498


def test_send_reads_a_json_array_from_stdin(server: LiveServer, tenant: Tenant) -> None:
    out = cli(server, tenant, "send", "app", stdin=json.dumps(EVENTS))
    assert out.returncode == 0, out.stderr
    assert "sent 4 events to app" in out.stdout
    assert {e["message"] for e in server.read(tenant.admin_key, "app")} == {
        "timeout", "refused", "ok"
    }  # fmt: skip


def test_send_waits_as_retry_after_says_and_sends_the_batch_again(
    server: LiveServer, tenant: Tenant
) -> None:
    arrivals: list[float] = []

    class Busy(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the standard library's name
            self.rfile.read(int(self.headers["content-length"]))
            arrivals.append(time.monotonic())
            first = len(arrivals) == 1
            self.send_response(429 if first else 202)
            if first:
                self.send_header("Retry-After", "2")
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *_: Any) -> None:
            pass

    busy = ThreadingHTTPServer(("127.0.0.1", 0), Busy)
    threading.Thread(target=busy.serve_forever, daemon=True).start()
    try:
        events_url = f"http://127.0.0.1:{busy.server_address[1]}/events"
        out = cli(server, tenant, "send", "logs", "--events-url", events_url, stdin='{"a": 1}\n')
    finally:
        busy.shutdown()
        busy.server_close()
    assert out.returncode == 0, out.stderr
    assert len(arrivals) == 2
    assert arrivals[1] - arrivals[0] >= 1.9  # as long as the server asked


def test_query_runs_an_inline_query_and_prints_a_table(server: LiveServer, tenant: Tenant) -> None:
    assert server.send(tenant.ingest_key, "app", EVENTS).status_code == 202
    out = cli(
        server, tenant, "query", "--calc", "MAX(duration)", "--calc", "COUNT",
        "--group-by", "service", "--filter", "level = error", "--from", "1h", "--json",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    rows = {r["groups"]["service"]: r["values"] for r in json.loads(out.stdout)["aggregates"]}
    assert rows == {
        "checkout": {"MAX(duration)": 900, "COUNT": 2, "_count": 2},
        "search": {"MAX(duration)": 50, "COUNT": 1, "_count": 1},
    }
    table = cli(server, tenant, "query", "--calc", "MAX(duration)", "--group-by", "service")
    assert table.returncode == 0, table.stderr
    assert "MAX(duration)" in table.stdout and "5000" in table.stdout
    # The series as a line of blocks per group: the events are all in the last bucket.
    chart = table.stdout.split("over time")[1].splitlines()
    assert any(line.strip().startswith("checkout") and line.endswith("█") for line in chart)
    # A dataset the environment never held is said, not only "No events".
    mistyped = cli(server, tenant, "query", "--dataset", "ap")
    assert mistyped.returncode == 0, mistyped.stderr
    assert "No events in the timeframe." in mistyped.stdout
    assert "warning: no dataset 'ap' here; known: app" in mistyped.stderr


def test_query_runs_a_saved_query_by_name(server: LiveServer, tenant: Tenant) -> None:
    assert server.send(tenant.ingest_key, "app", EVENTS).status_code == 202
    web.post(
        f"{server.url}/v1/queries",
        json={"name": "slow", "calculations": [{"operator": "MAX", "key": "duration"}]},
        headers={"Authorization": tenant.admin_key},
    )
    out = cli(server, tenant, "query", "slow", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["aggregates"][0]["values"]["MAX(duration)"] == 5000
    missing = cli(server, tenant, "query", "nothing-by-this-name")
    assert missing.returncode == 1 and "no saved query" in missing.stderr


def test_tail_follows_new_events_until_ctrl_c(server: LiveServer, tenant: Tenant) -> None:
    env = {**env_of(server, tenant), "COLUMNS": "200"}
    # Ctrl-C as at a terminal: a test run started in the background (a shell's `&`)
    # ignores SIGINT, and a child that inherits that never sees the interrupt.
    proc = subprocess.Popen(
        [*CLI, "tail", "--dataset", "live", "--filter", "level = error"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        seen = read_until(proc, "following the events")
        events = [
            {"level": "info", "message": "not shown"},
            {"level": "error", "message": "disk full \x1b[2J"},
        ]
        assert server.send(tenant.ingest_key, "live", events).status_code == 202
        seen += read_until(proc, "disk full")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "not shown" not in seen
    assert "disk full \\x1b[2J" in seen  # the escape sequence shown, not sent
    assert "\x1b[2J" not in seen


def read_until(proc: subprocess.Popen[str], text: str, timeout: float = 60) -> str:
    assert proc.stdout is not None
    seen = ""
    deadline = time.monotonic() + timeout
    while text not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"{text!r} not printed in {timeout} s: {seen!r}"
        ready, _, _ = select.select([proc.stdout], [], [], left)
        if ready:
            line = proc.stdout.readline()
            assert line, f"tail exited: {proc.stderr.read() if proc.stderr else ''}"
            seen += line
    return seen


def test_login_takes_the_address_from_limelight_url_as_the_other_commands_do(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    env = {**env_of(server, tenant), "XDG_CONFIG_HOME": str(tmp_path)}
    out = run_cli(["login"], env)
    assert out.returncode == 0, out.stderr
    assert f"Logged in to {server.url} as profile 'default'" in out.stdout
    saved = json.loads((tmp_path / "limelight" / "profiles.json").read_text())
    assert saved["default"]["url"] == server.url


def test_send_sends_a_backfill_of_a_year_in_requests_of_the_days_one_may_hold(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    now = int(time.time() * 1000)
    path = tmp_path / "year.ndjson"
    path.write_text(
        "".join(json.dumps({"timestamp": now - i * 86_400_000}) + "\n" for i in range(250))
    )
    out = cli(server, tenant, "send", "year", str(path))
    assert out.returncode == 0, out.stderr
    assert "sent 250 events to year" in out.stdout
