"""Clients that stall cost the server a bounded time and never shut others out."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.support import LiveServer, launch
from tests.unit.ingest.otlp_builders import span, traces

BODY_SECONDS = 2.0
PROTOBUF = {"content-type": "application/x-protobuf"}


@pytest.fixture(scope="module")
def impatient(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    srv = launch(
        tmp_path_factory.mktemp("impatient"),
        {
            "LIMELIGHT_BODY_READ_TIMEOUT": str(BODY_SECONDS),
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
    return httpx.post(f"{server.url}/otel/v1/traces", content=body, headers=headers, timeout=60)


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
