"""The developer's commands against a server that answers what it likes: what they print
never reaches the terminal as escape sequences or markup, and an answer too slow, too
large, endless or of another shape ends the command with an error line, not a traceback
or a hang."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from limelight.cli import querying, remote
from tests.support import run_cli

# Sets the window's title, writes the clipboard, clears the screen; then Rich markup
# that would close a style that is not open (a failed print) and make a link.
ESCAPES = "\x1b]0;TITLE\x07\x1b]52;c;ZWNobyBo\x1b\\\x1b[2J\u202e"
MARKUP = "[/][link=http://elsewhere.example]x[/link]"
HOSTILE = "svc" + ESCAPES + MARKUP

Route = Callable[["_Handler", bytes], None]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    routes: dict[tuple[str, str], Route] = {}
    seen: list[str] = []

    def _any(self) -> None:
        size = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(size) if size else b""
        path = self.path.split("?")[0]
        self.seen.append(f"{self.command} {path}")
        route = self.routes.get((self.command, path)) or self.routes.get(("*", "*"))
        if route is None:
            self.answer(404, {"message": "not here"})
            return
        route(self, body)

    do_GET = do_POST = do_PUT = do_DELETE = _any  # noqa: N815 - the standard library's names

    def answer(self, status: int, value: Any, raw: bytes | None = None) -> None:
        body = raw if raw is not None else json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def endless(self, chunk: bytes, pause_s: float) -> None:
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            while True:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
                time.sleep(pause_s)
        except OSError:
            return  # the command hung up

    def log_message(self, *_: Any) -> None:
        pass


class Fake:
    def __init__(self) -> None:
        handler = type("Handler", (_Handler,), {"routes": {}, "seen": []})
        self.handler = handler
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def on(self, method: str, path: str, route: Route) -> None:
        self.handler.routes[(method, path)] = route

    def answers(self, method: str, path: str, status: int, value: Any) -> None:
        self.on(method, path, lambda h, _: h.answer(status, value))

    @property
    def seen(self) -> list[str]:
        return list(self.handler.seen)

    def cli(self, *args: str) -> Any:
        env = {"LIMELIGHT_URL": self.url, "LIMELIGHT_API_KEY": "ll_sk_test"}
        return run_cli(list(args), env)


@pytest.fixture()
def fake() -> Iterator[Fake]:
    server = Fake()
    yield server
    server.http.shutdown()
    server.http.server_close()


def completed(data: dict[str, Any]) -> dict[str, Any]:
    return {"query_run": {"id": "run1", "status": "COMPLETED"}, "data": data}


def assert_shown_not_sent(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "\\x1b]0;TITLE" in text and "\\u202e" in text


def test_a_calculations_groups_keys_and_names_are_printed_shown(fake: Fake) -> None:
    groups = {HOSTILE: "g" + ESCAPES + MARKUP}
    name = "COUNT" + ESCAPES + MARKUP
    series = [{"data": [{"groups": groups, "aggregates": {name: i}}]} for i in range(4)]
    rows = [{"groups": groups, "values": {name: 3, "_count": 3}}]
    fake.answers("POST", "/v1/query_run", 200, completed({"aggregates": rows, "series": series}))
    out = fake.cli("query", "--calc", "COUNT", "--group-by", "svc")
    assert out.returncode == 0, out.stderr
    assert_shown_not_sent(out.stdout)
    # The markup is printed as written: no link, and "[/]" did not fail the print.
    assert MARKUP in out.stdout
    assert "over time (4 buckets)" in out.stdout


def test_a_servers_messages_are_printed_shown(fake: Fake) -> None:
    fake.answers("POST", "/v1/query_run", 400, {"message": "bad " + HOSTILE})
    refused = fake.cli("query", "--calc", "COUNT")
    assert refused.returncode == 1
    assert_shown_not_sent(refused.stderr)
    assert "bad svc" in refused.stderr

    failed = {"query_run": {"id": "r", "status": "FAILED", "error": "boom " + HOSTILE}}
    fake.answers("POST", "/v1/query_run", 200, failed)
    out = fake.cli("query", "--calc", "COUNT")
    assert out.returncode == 1
    assert_shown_not_sent(out.stderr)
    assert "the query failed: boom svc" in out.stderr


def test_a_plans_ids_from_the_server_are_printed_shown(fake: Fake, tmp_path: Path) -> None:
    for plural in ("queries", "alerts", "boards"):
        fake.answers("GET", f"/v1/{plural}", 200, {plural: []})
    managed = [{"type": "query", "managed_id": "q" + ESCAPES, "id": "id" + ESCAPES + MARKUP}]
    fake.answers("GET", "/v1/managed", 200, {"managed": managed})
    out = fake.cli("plan", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert_shown_not_sent(out.stdout)
    assert "no longer in the folder" in out.stdout


def test_an_answer_trickled_past_the_time_limit_ends_the_command(
    fake: Fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(remote, "TIMEOUT_S", 1.0)
    monkeypatch.setattr(querying, "RUN_WAIT_S", 1)
    fake.on("POST", "/v1/query_run", lambda h, _: h.endless(b" ", 0.2))
    began = time.monotonic()
    out = fake.cli("query", "--calc", "COUNT")
    assert out.returncode == 3
    assert "did not answer within 2 s" in out.stderr
    # Each read came in time: only the answer's whole time stopped it.
    assert time.monotonic() - began < 10


def test_an_endless_answer_is_read_up_to_a_size(
    fake: Fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(remote, "MAX_ANSWER_BYTES", 2**20)
    fake.on("POST", "/v1/query_run", lambda h, _: h.endless(b" " * 65536, 0))
    out = fake.cli("query", "--calc", "COUNT")
    assert out.returncode == 1
    assert "the answer is larger than 1 MB" in out.stderr


def test_the_client_waits_as_long_as_it_asks_the_server_to(
    fake: Fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(remote, "TIMEOUT_S", 1.0)
    monkeypatch.setattr(querying, "RUN_WAIT_S", 2)

    def held(h: _Handler, _: bytes) -> None:
        time.sleep(2.0)  # a run that finishes within the wait asked for
        h.answer(200, completed({"events": []}))

    fake.on("POST", "/v1/query_run", held)
    out = fake.cli("query")
    assert out.returncode == 0, out.stderr
    assert "No events in the timeframe." in out.stdout


def test_a_run_that_never_finishes_ends_the_command_without_a_busy_loop(
    fake: Fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(querying, "SETTLE_S", 2.0)
    started = {"query_run": {"id": "run1", "status": "STARTED"}}
    fake.answers("POST", "/v1/query_run", 200, started)
    fake.answers("GET", "/v1/query_run/run1", 200, started)
    out = fake.cli("query")
    assert out.returncode == 3
    assert "the query run did not finish within 2 s" in out.stderr
    assert len(fake.seen) <= 2 / querying.POLL_PAUSE_S + 2


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ({"hello": 1}, "no object 'query_run'"),
        ([1, 2], "no object 'query_run'"),
        ({"query_run": {"id": "r", "status": "DONE"}}, 'status "DONE"'),
        ({"query_run": {"id": "r", "status": "COMPLETED"}}, "no object 'data'"),
        (completed({"events": [1, "x", None]}), "no list of objects 'events'"),
        (completed({"aggregates": [{"groups": []}]}), "no object 'groups'"),
        (completed({"aggregates": [], "series": [{"data": 3}]}), "no list of objects 'data'"),
    ],
    ids=["object", "list", "status", "no-data", "events", "groups", "series"],
)
def test_an_answer_of_another_shape_is_an_error_line(fake: Fake, answer: Any, said: str) -> None:
    fake.answers("POST", "/v1/query_run", 200, answer)
    out = fake.cli("query", "--calc", "COUNT")
    assert out.returncode == 1
    assert f"error: query run: unexpected answer: {said}" in out.stderr


def test_json_nested_past_any_use_is_not_json_to_the_command(fake: Fake) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    fake.on("POST", "/v1/query_run", lambda h, _: h.answer(200, None, raw=deep))
    out = fake.cli("query")
    assert out.returncode == 1
    assert "the answer is not JSON" in out.stderr
    fake.on("POST", "/v1/query_run", lambda h, _: h.answer(400, None, raw=deep))
    refused = fake.cli("query")
    assert refused.returncode == 1
    assert "400 Bad Request" in refused.stderr


def test_tail_goes_on_past_events_without_an_id(fake: Fake) -> None:
    events = [{"message": "no id"}, {"_id": "0000000002", "message": "second"}]
    fake.answers("POST", "/v1/query_run", 200, completed({"events": events}))
    with remote.Server(remote.Target(fake.url, "k")) as server:
        assert querying._look(server, {}, "0") == "0000000002"


def test_a_time_in_other_digits_is_a_usage_error(fake: Fake) -> None:
    out = fake.cli("query", "--from", "²")
    assert out.returncode == 2
    assert "--from: '²' is not a time" in out.stderr


def test_an_events_level_is_upper_cased_before_its_codes_are_shown(fake: Fake) -> None:
    events = [{"_id": "1", "level": "error\x1b[5m", "message": "m"}]
    fake.answers("POST", "/v1/query_run", 200, completed({"events": events}))
    out = fake.cli("query")
    assert out.returncode == 0, out.stderr
    assert "ERROR\\x1b[5M" in out.stdout  # the code as it is: \x1b, not \X1B


def test_a_refused_key_says_where_it_came_from(fake: Fake, tmp_path: Path) -> None:
    fake.answers("POST", "/v1/query_run", 401, {"message": "Unauthorised"})
    out = fake.cli("query")
    assert out.returncode == 1
    assert "refused the key (401): set LIMELIGHT_API_KEY to an admin key" in out.stderr
    # A profile's key: log in again.
    config = {"XDG_CONFIG_HOME": str(tmp_path), "LIMELIGHT_API_KEY": ""}
    (tmp_path / "limelight").mkdir(mode=0o700)
    profiles = tmp_path / "limelight" / "profiles.json"
    profiles.write_text(json.dumps({"default": {"url": fake.url, "api_key": "ll_sk_old"}}))
    profiles.chmod(0o600)
    saved = run_cli(["query"], config)
    assert saved.returncode == 1
    assert "refused the key (401): log in again" in saved.stderr


def test_an_answer_compressed_other_than_its_head_says_is_an_error_line(fake: Fake) -> None:
    def lying(h: _Handler, _: bytes) -> None:
        body = json.dumps(completed({"events": []})).encode()
        h.send_response(200)
        h.send_header("content-type", "application/json")
        h.send_header("content-encoding", "gzip")  # but it is not
        h.send_header("content-length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    fake.on("POST", "/v1/query_run", lying)
    out = fake.cli("query")
    assert out.returncode == 1
    assert "POST /v1/query_run: the answer cannot be decoded" in out.stderr
