"""What an operator sees of a serving process: the start, the refusals before anything
is made, the access log and its formats."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from limelight.console.session import FORM_EXPIRED
from tests import web
from tests.e2e.test_console_pages import member_of
from tests.support import CLI, LiveServer, access_pids, free_port, launch


def _serve(
    data_dir: Path, port: int, *args: str, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    full = {**os.environ, "LIMELIGHT_DATA_DIR": str(data_dir), "LIMELIGHT_PORT": str(port),
            **(env or {})}  # fmt: skip
    out = subprocess.run(
        [*CLI, "serve", *args], env=full, capture_output=True, text=True, timeout=60, check=False
    )
    return out.returncode, out.stdout, out.stderr


def test_a_port_in_use_is_one_line_and_exit_3_before_anything_is_made(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = _serve(tmp_path / "data", port)
    assert code == 3
    assert out == ""  # no keys, no password "shown once"
    assert err.strip().splitlines() == [
        f"error: port {port} on 127.0.0.1 is in use by another process; stop it or set "
        "LIMELIGHT_PORT to another port"
    ]
    assert not (tmp_path / "data").exists()


def test_a_data_directory_held_by_a_server_is_one_line_and_exit_3(tmp_path: Path) -> None:
    first = launch(tmp_path / "data")
    try:
        before = sorted(p.name for p in (tmp_path / "data").iterdir())
        code, out, err = _serve(tmp_path / "data", free_port())
        assert code == 3
        assert out == ""
        assert err.strip().splitlines() == [
            f"error: the data directory {tmp_path / 'data'} is in use by limelight serve, "
            f"pid {first.proc.pid if first.proc else 0}, {first.url}"
        ]
        assert sorted(p.name for p in (tmp_path / "data").iterdir()) == before
    finally:
        first.stop()


def test_an_unusable_signing_key_is_one_line_and_exit_3_before_any_key_is_shown(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "secret.key").write_bytes(b"")
    code, out, err = _serve(data, free_port())
    assert code == 3
    assert out == ""  # no admin key or password "shown once" for a server that never ran
    assert err.strip().splitlines() == [
        f"error: {data / 'secret.key'} holds no usable key: remove it to have a new one made"
    ]


def test_serving_one_api_prints_only_its_address(tmp_path: Path) -> None:
    server = launch(tmp_path / "data", serve_args=("--app", "events"))
    try:
        server.stop()
        log = server.log_path.read_text()
    finally:
        server.stop()
    assert f"Events URL  {server.url}/v1/<dataset>" in log
    for other in ("Console", "Queries URL", "OAuth URL", "OTLP URL", "/events/v1"):
        assert other not in log
    serving = [line for line in log.splitlines() if "limelight.server: serving" in line]
    assert len(serving) == 1
    assert f"events url {server.url}/v1/<dataset>" in serving[0]
    assert "otlp" not in serving[0] and "console" not in serving[0]


def test_the_serving_line_names_addresses_data_directory_and_versions(tmp_path: Path) -> None:
    server = launch(tmp_path / "data")
    server.stop()
    said = [
        line for line in server.log_path.read_text().splitlines() if "limelight.server:" in line
    ]
    assert len(said) == 2
    line, stopped = said
    # The serving line's counterpart, last: a log without it ended in a crash.
    assert re.search(r"limelight\.server: stopped after serving for \d+s$", stopped)
    assert f"events url {server.url}/events/v1/<dataset>" in line
    assert f"queries url {server.url}/v1/queries" in line
    assert f"data directory {tmp_path / 'data'};" in line
    assert re.search(r"limelight \d+\.\d+\.\d+, Python 3\.\d+\.\d+, ClickHouse \d+\.", line)


def _access_lines(server: LiveServer, marker: str, count: int) -> list[str]:
    """The log's lines holding ``marker``, once there are ``count`` of them (a line is
    written as its response ends, a moment after the client has it)."""
    deadline = time.monotonic() + 10
    while True:
        lines = [line for line in server.log_path.read_text().splitlines() if marker in line]
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def test_the_access_log_says_who_sent_what_and_never_a_key(server: LiveServer) -> None:
    tenant = server.new_tenant()
    dataset = f"access-{uuid.uuid4().hex[:8]}"
    assert server.send(tenant.ingest_key, dataset, [{"n": 1}]).status_code == 202
    # Long enough that no key the server printed at start can contain it by chance.
    wrong = f"ll_pk_{uuid.uuid4().hex}"
    refused = web.post(f"{server.events_url}/v1/{dataset}", json=[{}], headers={"x-api-key": wrong})
    assert refused.status_code == 401
    lines = _access_lines(server, f"/events/v1/{dataset}", 2)
    assert len(lines) == 2, lines
    stored, unauthorised = lines
    who = f"tenant={tenant.workspace_id}/{tenant.environment_id}"
    assert re.search(
        rf"limelight\.access: POST /events/v1/{dataset} 202 \d+\.\dms 30B {who} "
        r"client=127\.0\.0\.1$",
        stored,
    )
    assert re.search(
        rf"POST /events/v1/{dataset} 401 \d+\.\dms \d+B tenant=- client=127\.0\.0\.1 "
        r'reason="unknown API key"$',
        unauthorised,
    )
    log = server.log_path.read_text()
    assert tenant.ingest_key not in log and tenant.admin_key not in log and wrong not in log


def test_a_line_break_in_a_path_is_written_escaped_not_as_a_line_of_its_own(
    server: LiveServer,
) -> None:
    marker = uuid.uuid4().hex[:8]
    answer = web.post(f"{server.url}/events/v1/a%0d%0aFAKE-{marker}%00", json=[{}])
    assert answer.status_code == 404  # no dataset has such a name
    [line] = _access_lines(server, f"FAKE-{marker}", 1)
    assert f"POST /events/v1/a\\x0d\\x0aFAKE-{marker}\\x00 404 " in line


def test_the_access_log_can_be_turned_off_and_written_as_json(tmp_path: Path) -> None:
    quiet = launch(tmp_path / "quiet", {"LIMELIGHT_ACCESS_LOG": "false"})
    structured = launch(tmp_path / "json", {"LIMELIGHT_LOG_FORMAT": "json"})
    try:
        for server in (quiet, structured):
            tenant = server.new_tenant()
            assert server.send(tenant.ingest_key, "logs", [{"n": 1}]).status_code == 202
    finally:
        quiet.stop()
        structured.stop()
    assert "limelight.access" not in quiet.log_path.read_text()
    records = [
        json.loads(line)
        for line in structured.log_path.read_text().splitlines()
        if line.startswith("{")
    ]
    access = [r for r in records if r["logger"] == "limelight.access"]
    assert len(access) >= 2  # /health while starting, then the events
    sent = access[-1]
    assert {k: sent[k] for k in ("level", "method", "path", "status", "workspace_id")} == {
        "level": "INFO", "method": "POST", "path": "/events/v1/logs", "status": 202,
        "workspace_id": tenant.workspace_id,
    }  # fmt: skip
    assert sent["pid"] == structured.proc.pid if structured.proc else 0
    assert isinstance(sent["duration_ms"], float) and sent["bytes"] == 30
    assert sent["time"].endswith("+00:00")
    serving, stopped = [r for r in records if r["logger"] == "limelight.server"]
    assert serving["data_dir"] == str(tmp_path / "json")
    assert set(serving["versions"]) == {"limelight", "python", "clickhouse"}
    assert stopped["message"].startswith("stopped after serving for ")
    assert isinstance(stopped["served_s"], float)


def test_requests_are_spread_over_the_processes_of_a_scaled_server(server: LiveServer) -> None:
    """With serve --workers 2 the access log says which process served each request."""
    if server.mode != "scaled":
        pytest.skip("one process serves in the embedded mode")
    tenant = server.new_tenant()
    pids: set[int] = set()
    # Which process accepts a connection is the kernel's choice: more rounds of 40 on a
    # busy machine, where one process may be slow to wake, until both have served.
    for _ in range(5):
        dataset = f"spread-{uuid.uuid4().hex[:8]}"
        for _ in range(40):  # a new connection each: any worker may accept it
            assert server.send(tenant.ingest_key, dataset, [{"n": 1}]).status_code == 202
        pids |= access_pids(_access_lines(server, f"/events/v1/{dataset}", 40))
        if len(pids) == 2:
            break
    assert len(pids) == 2, pids


def test_console_lines_name_the_tenant_and_refusals_their_reason(server: LiveServer) -> None:
    tenant = server.new_tenant()
    member = member_of(server, tenant)
    stranger = member_of(server, server.new_tenant())
    keys = f"{member.base}/keys"
    try:
        assert member.get(keys).status_code == 200
        assert stranger.get(keys).status_code == 404  # not a member: no tenant is named
        assert member.post(keys, kind="root").status_code == 400
        assert member.browser.client.post(keys, data={"csrf": "forged"}).status_code == 403
    finally:
        member.browser.close()
        stranger.browser.close()
    # A path of this test's own: the server is shared, and other tests ask for others.
    nowhere = f"/v1/no-such-endpoint-{uuid.uuid4().hex[:8]}"
    missing = web.get(f"{server.url}{nowhere}")
    assert missing.status_code == 404
    lines = _access_lines(server, f" {keys} ", 4)
    assert len(lines) == 4, lines
    page, foreign, refused, forged = lines
    who = f"tenant={tenant.workspace_id}/{tenant.environment_id}"
    assert re.search(rf"GET {keys} 200 .* {who} client=127\.0\.0\.1$", page)
    assert re.search(
        rf'GET {keys} 404 .* tenant=- client=127\.0\.0\.1 reason="Not Found"$', foreign
    )
    assert re.search(
        rf'POST {keys} 400 .* {who} client=\S+ reason="choose the kind of key: ingest or admin"$',
        refused,
    )
    assert forged.endswith(f'{who} client=127.0.0.1 reason="{FORM_EXPIRED}"')
    [unknown] = _access_lines(server, nowhere, 1)
    assert unknown.endswith('reason="Not Found"')
