"""``limelight send`` where the input, the key or the server's answers are not the usual:
each refusal is one ``error:`` line (or a refused line) and an exit code, never a
traceback, and a profile's key goes to no other server."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from limelight.cli.sending import BATCH_BYTES, MAX_RETRY_WAIT_S, retry_after
from tests import forkserver
from tests.support import LiveServer, Tenant, launch, run_cli

# (status, headers, body) of the fake Events API, from the body it was sent.
Answer = tuple[int, dict[str, str], bytes]
ACCEPTED: Answer = (202, {"Content-Type": "application/json"}, b"{}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    srv = launch(tmp_path_factory.mktemp("send-refusals"))
    yield srv
    srv.stop()


@pytest.fixture()
def tenant(server: LiveServer) -> Tenant:
    return server.new_tenant()


def env_of(server: LiveServer, tenant: Tenant) -> dict[str, str]:
    return {**server.env, "LIMELIGHT_URL": server.url, "LIMELIGHT_API_KEY": tenant.admin_key}


@dataclass
class FakeEventsApi:
    """What a fake Events API was sent: each request's headers and body."""

    url: str
    requests: list[tuple[dict[str, str], bytes]] = field(default_factory=list)

    def events(self) -> int:
        return sum(len(json.loads(body)) for _, body in self.requests)


@contextlib.contextmanager
def fake_events_api(
    answer: Callable[[bytes], Answer], host: str = "127.0.0.1"
) -> Iterator[FakeEventsApi]:
    """An Events API at ``http://HOST:PORT/events`` answering as ``answer`` says."""
    fake = FakeEventsApi("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the standard library's name
            body = self.rfile.read(int(self.headers["content-length"]))
            fake.requests.append((dict(self.headers), body))
            status, headers, text = answer(body)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(text)))
            self.end_headers()
            self.wfile.write(text)

        def log_message(self, *_: Any) -> None:
            pass

    httpd = ThreadingHTTPServer((host, 0), Handler)
    fake.url = f"http://{host}:{httpd.server_address[1]}/events"
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_send_gives_a_profiles_key_to_no_other_server_and_warns_of_plain_http(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    config = {**server.env, "XDG_CONFIG_HOME": str(tmp_path)}
    config.pop("LIMELIGHT_URL", None)
    login = run_cli(
        ["login", "--url", server.url], {**config, "LIMELIGHT_API_KEY": tenant.admin_key}
    )
    assert login.returncode == 0, login.stderr
    profile_only = {**config, "LIMELIGHT_API_KEY": ""}
    with fake_events_api(lambda _: ACCEPTED, host="127.0.0.2") as other:
        out = run_cli(["send", "logs", "--events-url", other.url], profile_only, '{"a": 1}\n')
        assert out.returncode == 2, out.stderr
        assert "LIMELIGHT_API_KEY" in out.stderr and "Traceback" not in out.stderr
        assert other.requests == []  # the key never left
        # With a key given for it, the other server is sent to, over plain http: said.
        given = run_cli(
            ["send", "logs", "--events-url", other.url],
            {**config, "LIMELIGHT_API_KEY": "ll_sk_given"},
            '{"a": 1}\n',
        )
        assert given.returncode == 0, given.stderr
        assert "plain http" in given.stderr
        assert other.requests[0][0]["Authorization"] == "ll_sk_given"
    # The profile's own server, named by its Events API address, takes the profile's key.
    same = run_cli(
        ["send", "logs", "--events-url", f"{server.url}/events/"], profile_only, '{"a": 1}\n'
    )
    assert same.returncode == 0, same.stderr
    assert len(server.read(tenant.admin_key, "logs")) == 1


def test_send_refuses_an_event_larger_than_a_batch_by_its_line_and_sends_the_rest(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    path = tmp_path / "events.ndjson"
    big = json.dumps({"big": "x" * (BATCH_BYTES + 3_000_000)})
    path.write_text("\n".join(['{"n": 1}', big, '{"n": 3}']) + "\n")
    out = run_cli(["send", "logs", str(path)], env_of(server, tenant))
    assert out.returncode == 1, out.stderr
    assert "sent 2 events to logs" in out.stdout
    assert "line/element 2:" in out.stderr and "1 events were refused" in out.stderr
    assert sorted(e["n"] for e in server.read(tenant.admin_key, "logs")) == [1, 3]


def test_send_splits_a_batch_the_server_finds_too_large(server: LiveServer, tenant: Tenant) -> None:
    """A server with a smaller body limit: the batch is sent in halves, and the event
    that is too large alone is refused by its line."""

    def answer(body: bytes) -> Answer:
        return (413, {}, b"too large") if b"big" in body else ACCEPTED

    lines = "".join(json.dumps({"n": i, "big" if i == 3 else "small": 1}) + "\n" for i in range(6))
    with fake_events_api(answer) as fake:
        out = run_cli(["send", "logs", "--events-url", fake.url], env_of(server, tenant), lines)
        assert out.returncode == 1, out.stderr
        assert "sent 5 events to logs" in out.stdout
        assert "line/element 4:" in out.stderr and "413" in out.stderr
        accepted = [body for _, body in fake.requests if b"big" not in body]
        assert sum(len(json.loads(body)) for body in accepted) == 5


def test_send_sends_batches_while_stdin_is_still_open(server: LiveServer, tenant: Tenant) -> None:
    read_end, write_end = os.pipe()
    with (
        fake_events_api(lambda _: ACCEPTED) as fake,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
    ):
        proc = forkserver.start(
            "limelight", ["send", "logs", "--events-url", fake.url], env_of(server, tenant),
            stdin=read_end, stdout=out, stderr=err,
        )  # fmt: skip
        os.close(read_end)
        try:
            os.write(write_end, b"".join(b'{"n": %d}\n' % i for i in range(2500)))
            deadline = time.monotonic() + 20
            while fake.events() < 2000 and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            arrived_while_open = fake.events()
        finally:
            os.close(write_end)
            code = proc.wait(30)
        err.seek(0)
        assert arrived_while_open == 2000, err.read().decode()
        assert code == 0
        assert fake.events() == 2500


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_send_refuses_a_file_it_cannot_read(
    server: LiveServer, tenant: Tenant, tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "nothing.ndjson" if kind == "missing" else tmp_path
    out = run_cli(["send", "logs", str(path)], env_of(server, tenant))
    assert out.returncode == 2, out.stderr
    assert "error:" in out.stderr and str(path) in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("form", ["array", "ndjson"])
def test_send_reads_a_file_starting_with_a_byte_order_mark(
    server: LiveServer, tenant: Tenant, tmp_path: Path, form: str
) -> None:
    events = [{"n": 1}, {"n": 2}]
    text = json.dumps(events) if form == "array" else "\n".join(map(json.dumps, events))
    path = tmp_path / "events.json"
    path.write_text(text, encoding="utf-8-sig")
    out = run_cli(["send", "logs", str(path)], env_of(server, tenant))
    assert out.returncode == 0, out.stderr
    assert "sent 2 events to logs" in out.stdout


def test_send_numbers_lines_from_the_first_one_even_when_blank(
    server: LiveServer, tenant: Tenant
) -> None:
    out = run_cli(["send", "logs"], env_of(server, tenant), '\n\n{"n": 1}\n{not json\n')
    assert out.returncode == 1, out.stderr
    assert "line/element 4: not valid JSON" in out.stderr


JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize(
    "answer",
    [
        (400, JSON, b'{"invalid": [{"index": 5, "reason": "no"}]}'),
        (400, JSON, b'{"invalid": [{"index": -1, "reason": "no"}]}'),
        (400, JSON, b'{"invalid": [{"index": "0", "reason": "no"}]}'),
        (400, JSON, b'{"invalid": [{"index": 0, "reason": "no"}], "invalidCount": "abc"}'),
        (400, JSON, b'{"invalid": [{"index": 0, "reason": "no"}], "invalidCount": 99}'),
        (400, JSON, b'{"invalid": {"index": 0}}'),
        (400, JSON, b"[1, 2]"),
        (500, JSON, b"<html>not JSON</html>"),
        (500, JSON, b"\xff\xfe"),
    ],
    ids=lambda a: a[2].decode(errors="replace")[:40],
)
def test_send_tells_an_answer_it_cannot_read_in_one_line(
    server: LiveServer, tenant: Tenant, answer: Answer
) -> None:
    with fake_events_api(lambda _: answer) as fake:
        out = run_cli(
            ["send", "logs", "--events-url", fake.url], env_of(server, tenant), '{"a": 1}\n'
        )
    assert out.returncode == 1, out.stderr
    assert "error: unexpected answer from the server" in out.stderr
    assert "Traceback" not in out.stderr


def test_send_waits_a_second_for_a_retry_after_that_is_no_number(
    server: LiveServer, tenant: Tenant
) -> None:
    def answer(_: bytes) -> Answer:
        busy = len(fake.requests) == 1
        return (429, {"Retry-After": "nan"}, b"") if busy else ACCEPTED

    with fake_events_api(answer) as fake:
        out = run_cli(
            ["send", "logs", "--events-url", fake.url], env_of(server, tenant), '{"a": 1}\n'
        )
    assert out.returncode == 0, out.stderr
    assert len(fake.requests) == 2


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("nan", 1.0),
        ("inf", MAX_RETRY_WAIT_S),
        ("-inf", 0.0),
        ("1e999", MAX_RETRY_WAIT_S),
        ("Fri, 31 Dec 9999 23:59:59 GMT", MAX_RETRY_WAIT_S),
        ("Mon, 01 Jan 0001 00:00:00 GMT", 0.0),
        ("soon", 1.0),
    ],
)
def test_retry_after_keeps_any_value_within_a_minute(value: str, seconds: float) -> None:
    assert retry_after(value) == seconds
