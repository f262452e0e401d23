"""Small batches through the write-ahead log, seen from a client: readable by the next
read, a 503 with Retry-After past the buffer's bound that loses nothing, and the
buffer's state on /metrics."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import web
from tests.support import LiveServer, launch

EVENT = {"message": "x" * 400}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # An environment may hold a quarter of the buffer: 4,000 bytes, about eight of
    # these events encoded (each JSON text goes twice, as raw and data).
    srv = launch(
        Path(tmp_path_factory.mktemp("buffer")), {"LIMELIGHT_INGEST_BUFFER_BYTES": "16000"}
    )
    yield srv
    srv.stop()


def test_an_acknowledged_batch_is_in_the_next_read(server: LiveServer) -> None:
    tenant = server.new_tenant()
    for n in range(20):
        assert server.send(tenant.ingest_key, "logs", [{"n": n}]).status_code == 202
        # No wait between them: the read empties what the log holds of this environment.
        assert [e["n"] for e in server.read(tenant.admin_key, "logs", limit=1)] == [n]


def test_a_batch_past_the_bound_gets_503_and_nothing_acknowledged_is_lost(
    server: LiveServer,
) -> None:
    tenant = server.new_tenant()
    answer = server.send(tenant.ingest_key, "logs", [EVENT] * 10)
    assert answer.status_code == 503, answer.text
    assert answer.headers["retry-after"] == "2"
    assert "try again" in answer.json()["reason"]
    # A batch within the bound goes in and is read back; the refused one stored nothing.
    assert server.send(tenant.ingest_key, "logs", [EVENT] * 2).status_code == 202
    assert len(server.read(tenant.admin_key, "logs")) == 2
    metrics = web.get(f"{server.url}/metrics", timeout=30).text
    assert 'limelight_ingest_buffer_refused_total{reason="tenant_full"} 1.0' in metrics
    assert "limelight_ingest_buffer_bytes 0.0" in metrics
