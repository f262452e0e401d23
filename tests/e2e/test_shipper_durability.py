"""An acknowledged bulk, push or HEC request is on disk: SIGKILL right after the answers
cannot take its events back, and a refused item in it costs the others nothing."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
import pytest

from tests import web
from tests.support import launch

PER_REQUEST = 100


@pytest.mark.slow
def test_acknowledged_shipper_events_survive_sigkill(tmp_path: Path) -> None:
    server = launch(tmp_path / "data")
    try:
        tenant = server.new_tenant()
        bearer = {"Authorization": f"Bearer {tenant.ingest_key}"}
        lines = [{"create": {}}, {"format": "es", "i": 0}, {"delete": {"_id": "x"}}]
        lines += [
            line
            for i in range(1, PER_REQUEST)
            for line in ({"create": {}}, {"format": "es", "i": i})
        ]
        bulk = b"".join(orjson.dumps(line) + b"\n" for line in lines)
        answer = web.post(f"{server.url}/es/durable/_bulk", content=bulk, headers=bearer)
        assert answer.status_code == 200 and answer.json()["errors"] is True
        now = time.time_ns()
        values = [[str(now + i), orjson.dumps({"format": "loki", "i": i}).decode()]
                  for i in range(PER_REQUEST)]  # fmt: skip
        push = {"streams": [{"stream": {"dataset": "durable"}, "values": values}]}
        answer = web.post(f"{server.url}/loki/api/v1/push", content=orjson.dumps(push),
                          headers={**bearer, "Content-Type": "application/json"})  # fmt: skip
        assert answer.status_code == 204
        hec = b"".join(orjson.dumps({"event": {"format": "hec", "i": i}, "index": "durable"})
                       for i in range(PER_REQUEST))  # fmt: skip
        answer = web.post(f"{server.url}/services/collector", content=hec,
                          headers={"Authorization": f"Splunk {tenant.ingest_key}"})  # fmt: skip
        assert answer.json() == {"text": "Success", "code": 0}
        server.kill()
    finally:
        server.stop()
    server.start()  # the same data directory and port
    try:
        events = server.read(tenant.admin_key, "durable", limit=10_000)
    finally:
        server.stop()
    found = sorted((e["format"], e["i"]) for e in events)
    assert found == sorted((f, i) for f in ("es", "hec", "loki") for i in range(PER_REQUEST))
