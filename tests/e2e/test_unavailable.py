"""Every 503 the server sends says when to retry (Retry-After).

Provoked here: a request past the concurrency limit, a connection past the cap, and the
Datasets API when the engine refuses its statement. The run queue's refusals are
provoked in tests/integration/test_run_queue_refusals_chdb.py, the OTLP in-flight bound
in tests/e2e/test_otel_http.py and test_slow_clients.py; tests/unit/test_retry_after.py
checks that no other place answers 503.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import web
from tests.e2e.test_slow_clients import accepted, partial_head, until_closed
from tests.support import LiveServer, launch


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    srv = launch(
        Path(tmp_path_factory.mktemp("unavailable")),
        {
            "LIMELIGHT_MAX_CONCURRENCY": "2",
            "LIMELIGHT_MAX_CONNECTIONS": "3",
            # Every statement's result is over it: the engine refuses them all.
            "LIMELIGHT_QUERY_MAX_RESULT_BYTES": "1",
        },
    )
    yield srv
    srv.stop()


def answer_to(server: LiveServer, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(request)
        return until_closed(sock, within=30)


def test_the_datasets_api_answers_503_with_retry_after_when_the_engine_refuses(
    server: LiveServer,
) -> None:
    tenant = server.new_tenant()
    assert server.send(tenant.ingest_key, "logs", [{"message": "hello"}]).status_code == 202
    admin = {"Authorization": tenant.admin_key}
    for path in ("/v1/datasets", "/v1/datasets/logs/keys"):
        answer = web.get(f"{server.url}{path}", headers=admin, timeout=30)
        assert answer.status_code == 503, (path, answer.text)
        assert answer.headers["retry-after"] == "1"


def test_a_request_past_the_concurrency_limit_gets_503_with_retry_after(
    server: LiveServer,
) -> None:
    with web.Client(base_url=server.url, timeout=30) as kept:
        assert kept.get("/health").status_code == 200  # its connection stays open
        answer = answer_to(server, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert kept.get("/health").status_code == 200
    assert answer.startswith(b"HTTP/1.1 503 "), answer
    assert b"\r\nretry-after: 1\r\n" in answer.lower()
    assert b"\r\ndate: " in answer.lower()  # uvicorn's answer (the cap's is written whole)


def test_a_connection_past_the_cap_gets_503_with_retry_after(server: LiveServer) -> None:
    held = [partial_head(server) for _ in range(3)]
    try:
        deadline = time.monotonic() + 10
        while accepted(server, held) < 3:  # the server has taken them in
            assert time.monotonic() < deadline, "the server did not take the connections"
            time.sleep(0.02)
        # The answer comes as the connection is taken, before any request: one sent
        # first could still be unread when the server closes, which the kernel then
        # answers with a reset instead of the bytes written.
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            answer = until_closed(sock, within=30)
    finally:
        for sock in held:
            with contextlib.suppress(OSError):
                sock.close()
    assert answer.startswith(b"HTTP/1.1 503 "), answer
    assert b"\r\nretry-after: 1\r\n" in answer.lower()
    assert b"\r\ndate: " not in answer.lower()  # written at once, not by uvicorn
