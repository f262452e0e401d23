"""Clients that stall cost the server a bounded time and never shut others out."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from tests import web
from tests.support import LiveServer, launch
from tests.unit.ingest.otlp_builders import span, traces

# Long enough that the requests a test expects answered are answered within them on a
# machine busy with the rest of the suite (four test processes on two cores).
BODY_SECONDS = 3.0
HEAD_SECONDS = 3.0
MAX_CONCURRENCY = 450
MAX_CONNECTIONS = 500
PROTOBUF = {"content-type": "application/x-protobuf"}


@pytest.fixture(scope="module")
def impatient(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    srv = launch(
        tmp_path_factory.mktemp("impatient"),
        {
            "LIMELIGHT_BODY_READ_TIMEOUT": str(BODY_SECONDS),
            "LIMELIGHT_HEADER_TIMEOUT": str(HEAD_SECONDS),
            "LIMELIGHT_KEEP_ALIVE_TIMEOUT": "1",
            "LIMELIGHT_MAX_CONCURRENCY": str(MAX_CONCURRENCY),
            "LIMELIGHT_MAX_CONNECTIONS": str(MAX_CONNECTIONS),
            "LIMELIGHT_OTEL_MAX_IN_FLIGHT_PER_WORKSPACE": "1",
        },
    )
    yield srv
    srv.stop()


def connect(server: LiveServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=30)


def stall_upload(server: LiveServer, path: str, headers: dict[str, str]) -> socket.socket:
    """A request that announces 1,000 bytes of body, sends one and stops."""
    sock = connect(server)
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Length: 1000"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + b"{")
    return sock


def partial_head(server: LiveServer) -> socket.socket:
    """A connection that sends part of a request head and stops."""
    sock = connect(server)
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    return sock


def open_sockets(server: LiveServer) -> int:
    """The server process's open sockets (its connections, listener and the like)."""
    assert server.proc is not None
    fds = f"/proc/{server.proc.pid}/fd"
    count = 0
    for fd in os.listdir(fds):
        with contextlib.suppress(FileNotFoundError):  # closed since it was listed
            count += os.readlink(f"{fds}/{fd}").startswith("socket:")
    return count


def accepted(server: LiveServer, socks: list[socket.socket]) -> int:
    """How many of ``socks`` the server process has taken in (accepted): their server
    ends, found in the kernel's TCP table by port, among the process's descriptors.
    Exact where a count of all its sockets is not: one a previous test left may close
    while the count is read."""
    assert server.proc is not None
    clients = {sock.getsockname()[1] for sock in socks}
    ends = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(FileNotFoundError), open(table) as rows:
            for row in list(rows)[1:]:
                fields = row.split()
                local, remote = (
                    int(fields[1].rsplit(":", 1)[1], 16),
                    int(fields[2].rsplit(":", 1)[1], 16),
                )
                if local == server.port and remote in clients:
                    ends.add(f"socket:[{fields[9]}]")
    fds = f"/proc/{server.proc.pid}/fd"
    held = 0
    for fd in os.listdir(fds):
        with contextlib.suppress(FileNotFoundError):
            held += os.readlink(f"{fds}/{fd}") in ends
    return held


def wait_held(server: LiveServer, before: int, count: int, within: float) -> int:
    """The connections the server holds beyond ``before``, once there are ``count`` of
    them; fails past ``within`` seconds."""
    deadline = time.monotonic() + within
    while (held := open_sockets(server) - before) < count:
        assert time.monotonic() < deadline, f"the server holds {held} of {count} connections"
        time.sleep(0.02)
    return held


def unanswered(sock: socket.socket) -> bool:
    """Nothing received and the connection still open (at the moment of asking)."""
    sock.setblocking(False)
    try:
        sock.recv(1, socket.MSG_PEEK)
    except BlockingIOError:
        return True
    finally:
        sock.setblocking(True)
    return False


def otlp_in_flight(server: LiveServer) -> float:
    """OTLP requests being stored now, from the server's /metrics."""
    text = web.get(f"{server.url}/metrics").text
    match = re.search(r"^limelight_otlp_requests_in_flight (\S+)$", text, re.MULTILINE)
    assert match, "no limelight_otlp_requests_in_flight in /metrics"
    return float(match.group(1))


def until_closed(sock: socket.socket, within: float) -> bytes:
    """Everything the server sends before it closes the connection; fails past ``within``."""
    sock.settimeout(within)
    received = b""
    with sock:
        while chunk := sock.recv(65536):
            received += chunk
    return received


def spans_body(count: int, name: str = "op") -> bytes:
    now = time.time_ns()
    spans = [
        span(name, span_id=(n + 1).to_bytes(8, "big"), start=now, end=now + 1_000_000)
        for n in range(count)
    ]
    data: bytes = traces(spans, {"service.name": "api"}).SerializeToString()
    return data


def export(server: LiveServer, key: str, body: bytes) -> httpx.Response:
    headers = {**PROTOBUF, "x-api-key": key}
    return web.post(f"{server.url}/otel/v1/traces", content=body, headers=headers, timeout=60)


def test_stalled_otlp_uploads_do_not_shut_otlp_for_any_tenant(impatient: LiveServer) -> None:
    stalling, other = impatient.new_tenant(), impatient.new_tenant()
    headers = {**PROTOBUF, "x-api-key": stalling.ingest_key}
    before = open_sockets(impatient)
    opening = time.monotonic()  # before the server can start any upload's timer
    stalled = [stall_upload(impatient, "/otel/v1/traces", headers) for _ in range(20)]
    wait_held(impatient, before, 20, within=BODY_SECONDS - 0.5)  # none has timed out yet
    for tenant in (other, stalling):
        answer = export(impatient, tenant.ingest_key, spans_body(3))
        assert answer.status_code == 200, answer.content
    # Answered while every stalled upload is still held, waiting for its body.
    assert [unanswered(sock) for sock in stalled] == [True] * 20
    # Each stalled upload is cut off once the body read timeout has passed.
    for sock in stalled:
        assert until_closed(sock, within=BODY_SECONDS + 10).startswith(b"HTTP/1.1 408 ")
    assert time.monotonic() - opening >= BODY_SECONDS


def test_a_stalled_body_gets_408_and_a_closed_connection_everywhere(
    impatient: LiveServer,
) -> None:
    tenant = impatient.new_tenant()
    ingest, admin = {"x-api-key": tenant.ingest_key}, {"Authorization": tenant.admin_key}
    form = {"content-type": "application/x-www-form-urlencoded"}
    requests = {
        "/events/v1/logs": ingest,
        "/otel/v1/logs": {**ingest, "content-type": "application/json"},
        "/v1/queries": admin,
        "/v1/query_run": admin,
        "/login": form,
        "/oauth/token": {"content-type": "application/json"},
    }
    stalled = {path: stall_upload(impatient, path, headers) for path, headers in requests.items()}
    for path, sock in stalled.items():
        answer = until_closed(sock, within=BODY_SECONDS + 10)
        assert answer.startswith(b"HTTP/1.1 408 "), (path, answer)
        assert b"connection: close" in answer.lower(), (path, answer)


def test_one_workspace_cannot_take_every_otlp_slot(impatient: LiveServer) -> None:
    busy, other = impatient.new_tenant(), impatient.new_tenant()
    big = spans_body(30_000, "bulk")  # a second or more to store
    start = threading.Barrier(3)
    answers: list[httpx.Response] = []

    def send_big() -> None:
        start.wait()
        answers.append(export(impatient, busy.ingest_key, big))

    senders = [threading.Thread(target=send_big) for _ in range(3)]
    for sender in senders:
        sender.start()
    deadline = time.monotonic() + 30
    while otlp_in_flight(impatient) < 1:  # the first of the uploads is being stored
        assert time.monotonic() < deadline, "no upload of the busy workspace is being stored"
        time.sleep(0.02)
    # Another workspace is served while the busy one's slot is taken: its stored upload
    # has not been answered yet.
    assert export(impatient, other.ingest_key, spans_body(1)).status_code == 200
    assert [a.status_code for a in answers if a.status_code == 200] == []
    for sender in senders:
        sender.join()
    statuses = sorted(a.status_code for a in answers)
    assert statuses[0] == 200 and statuses[-1] == 503, statuses
    shed = next(a for a in answers if a.status_code == 503)
    assert shed.headers["retry-after"] == "1"


def test_stalled_heads_and_bodies_are_closed_while_the_server_keeps_answering(
    impatient: LiveServer,
) -> None:
    tenant = impatient.new_tenant()
    before = open_sockets(impatient)
    opened = time.monotonic()  # before the server can start any connection's timer
    heads = [partial_head(impatient) for _ in range(300)]
    ingest = {"x-api-key": tenant.ingest_key}
    bodies = [stall_upload(impatient, "/events/v1/logs", ingest) for _ in range(50)]
    # The server holds them, before the first of them times out: they are not refused.
    wait_held(impatient, before, 340, within=HEAD_SECONDS - 0.5)
    health = [web.get(f"{impatient.url}/health", timeout=10).status_code for _ in range(20)]
    stored = impatient.send(tenant.ingest_key, "logs", [{"message": "still here"}])
    assert health == [200] * 20
    assert stored.status_code == 202
    # Answered while every stalled connection is still held (bench/stalled.py times them).
    assert sum(unanswered(sock) for sock in heads + bodies) == 350

    # The server closes them once their time is up: heads unanswered, bodies with 408.
    for sock in heads:
        assert until_closed(sock, within=HEAD_SECONDS + 10) == b""
    for sock in bodies:
        assert until_closed(sock, within=BODY_SECONDS + 10).startswith(b"HTTP/1.1 408 ")
    assert time.monotonic() - opened >= min(HEAD_SECONDS, BODY_SECONDS)
    assert open_sockets(impatient) <= before + 5


def test_connections_past_the_cap_are_closed_at_once(impatient: LiveServer) -> None:
    before = open_sockets(impatient)
    attack = [partial_head(impatient) for _ in range(MAX_CONNECTIONS + 200)]
    for sock in attack:
        sock.setblocking(False)
    answered: set[int] = set()
    deadline = time.monotonic() + 10
    while len(answered) < 200 and time.monotonic() < deadline:  # the server takes a while
        for n, sock in enumerate(attack):
            if n not in answered:
                with contextlib.suppress(BlockingIOError):  # held: nothing sent yet
                    if sock.recv(4096).startswith(b"HTTP/1.1 503 "):
                        answered.add(n)
        time.sleep(0.05)
    turned_away = len(answered)
    held = open_sockets(impatient) - before
    print(f"\n{len(attack)} connections opened: {held} held, {turned_away} turned away with 503")
    assert held <= MAX_CONNECTIONS
    assert turned_away >= 200
    # Once the held ones are closed for their stalled heads, the server answers again.
    for sock in attack:
        sock.setblocking(True)
        # Closed with part of a head unread, the server's end answers with a reset.
        with contextlib.suppress(ConnectionResetError):
            until_closed(sock, within=HEAD_SECONDS + 10)
    assert web.get(f"{impatient.url}/health", timeout=10).status_code == 200


def test_a_keep_alive_connection_whose_next_head_trickles_in_is_closed(
    impatient: LiveServer,
) -> None:
    sock = connect(impatient)
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert sock.recv(4096).startswith(b"HTTP/1.1 200 ")
    started = time.monotonic()
    sock.sendall(b"GET /health HTTP/1.1\r\n")
    closed = False
    # A byte every half second keeps resetting the idle keep-alive timer.
    while time.monotonic() - started < HEAD_SECONDS + 10:
        time.sleep(0.5)
        try:
            sock.sendall(b"X")
        except OSError:
            closed = True
            break
        sock.setblocking(False)
        try:
            closed = sock.recv(4096) == b""
        except BlockingIOError:
            pass
        finally:
            sock.setblocking(True)
        if closed:
            break
    sock.close()
    assert closed
    assert time.monotonic() - started >= HEAD_SECONDS
