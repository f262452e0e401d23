"""A client that closes its connection in the middle of a request body is one line of the
access log, counted as 499 (the client went away), never a 500 with a traceback."""

from __future__ import annotations

import re
import socket
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import web
from tests.support import LiveServer, launch

FORM = "application/x-www-form-urlencoded"
JSON = "application/json"
# (path, method, content type, key): every way a body is read, with and without a key.
CUT_SHORT = [
    ("/login", "POST", FORM, ""),
    ("/logout", "POST", FORM, ""),
    ("/oauth/authorize", "POST", FORM, ""),
    ("/oauth/token", "POST", FORM, ""),
    ("/oauth/token", "POST", JSON, ""),
    ("/oauth/revoke", "POST", JSON, ""),
    ("/v1/queries", "POST", JSON, "admin"),
    ("/v1/query_run", "POST", JSON, "admin"),
    ("/v1/alerts", "POST", JSON, "admin"),
    ("/v1/datasets/logs/retention", "PUT", JSON, "admin"),
    ("/events/v1/logs", "POST", JSON, "ingest"),
    ("/otel/v1/traces", "POST", JSON, "ingest"),
    ("/otel/v1/logs", "POST", "application/x-protobuf", "ingest"),
]
COUNTED = r'^limelight_http_requests_total\{method="(\w+)",route="([^"]+)",status="(\d+)"\} (\S+)$'
ROUTES = {
    "/v1/datasets/logs/retention": "/v1/datasets/{name}/retention",
    "/events/v1/logs": "/events/v1/{dataset}",
    "/otel/v1/traces": "/otel/v1/{signal}",
    "/otel/v1/logs": "/otel/v1/{signal}",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server of its own: the test reads everything its log says."""
    srv = launch(Path(tmp_path_factory.mktemp("gone")))
    yield srv
    srv.stop()


def cut_short(server: LiveServer, method: str, path: str, headers: dict[str, str]) -> None:
    """Announce 1,000 bytes of body, send 3, close the connection."""
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Length: 1000"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + b"abc")


def log_lines_after(server: LiveServer, offset: int, count: int, within: float) -> list[str]:
    """The log's lines past ``offset`` once ``count`` access lines are among them."""
    deadline = time.monotonic() + within
    while True:
        with server.log_path.open("rb") as log:
            log.seek(offset)
            lines = log.read().decode().splitlines()
        if sum(" limelight.access: " in line for line in lines) >= count:
            return lines
        assert time.monotonic() < deadline, "\n".join(lines)
        time.sleep(0.05)


def test_a_body_cut_short_is_one_line_and_counted_as_a_client_that_went_away(
    server: LiveServer,
) -> None:
    tenant = server.new_tenant()
    keys = {
        "admin": {"Authorization": tenant.admin_key},
        "ingest": {"x-api-key": tenant.ingest_key},
    }
    offset = server.log_path.stat().st_size
    for path, method, content_type, key in CUT_SHORT:
        cut_short(server, method, path, {"Content-Type": content_type, **keys.get(key, {})})
    lines = log_lines_after(server, offset, len(CUT_SHORT), within=30)

    assert len(lines) == len(CUT_SHORT), "\n".join(lines)  # no traceback, nothing else
    logged = []
    for line in lines:
        found = re.search(
            r" limelight\.access: (\w+) (\S+) 499 [\d.]+ms 0B .* \(the client went away\)$", line
        )
        assert found, line
        logged.append(found.groups())
    # Served concurrently: the lines come in any order.
    assert sorted(logged) == sorted((method, path) for path, method, _, _ in CUT_SHORT)

    scraped = web.get(f"{server.url}/metrics", timeout=30).text
    counted = {
        (method, route, status): float(value)
        for method, route, status, value in re.findall(COUNTED, scraped, re.M)
        if route not in ("/health", "/metrics")
    }
    expected = Counter((method, ROUTES.get(path, path), "499") for path, method, _, _ in CUT_SHORT)
    assert counted == expected
