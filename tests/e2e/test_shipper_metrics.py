"""The shippers' formats in the metrics: events stored and refused by ``api`` label, and
requests refused whole, counted once the answer says so."""

from __future__ import annotations

import time

import orjson

from tests import web
from tests.e2e.test_metrics import Samples, scrape, value, wait_for
from tests.support import LiveServer

LABELS = ("es_bulk", "loki", "splunk_hec")


def test_each_format_counts_what_it_stored_and_refused(server: LiveServer) -> None:
    tenant = server.new_tenant()
    bearer = {"Authorization": f"Bearer {tenant.ingest_key}"}
    before = scrape(server)

    bulk = b'{"create":{}}\n{"n":1}\n{"create":{}}\n{"n":2}\n{"delete":{"_id":"x"}}\n'
    assert web.post(f"{server.url}/es/m/_bulk", content=bulk, headers=bearer).status_code == 200
    assert web.post(f"{server.url}/es/_bulk", content=bulk).status_code == 401
    now = str(time.time_ns())
    push = {
        "streams": [{"stream": {"dataset": "m"}, "values": [[now, "a"], [now, "b"], [now, "c"]]}]
    }
    loki = web.post(f"{server.url}/loki/api/v1/push", content=orjson.dumps(push),
                    headers={**bearer, "Content-Type": "application/json"})  # fmt: skip
    assert loki.status_code == 204
    hec = b'{"event": "a", "index": "m"}{"time": 1}'
    splunk = {"Authorization": f"Splunk {tenant.ingest_key}"}
    answer = web.post(f"{server.url}/services/collector", content=hec, headers=splunk)
    assert answer.json()["code"] == 12
    assert web.post(f"{server.url}/services/collector", content=b"").json()["code"] == 2

    def counted(after: Samples) -> None:
        def grew(name: str, **labels: str) -> float:
            return value(after, name, **labels) - value(before, name, **labels)

        stored = {api: grew("limelight_events_stored_total", api=api) for api in LABELS}
        assert stored == {"es_bulk": 2, "loki": 3, "splunk_hec": 1}
        assert (
            grew("limelight_ingest_events_total", api="es_bulk", outcome="unsupported_action") == 1
        )
        assert grew("limelight_ingest_events_total", api="splunk_hec", outcome="no_event") == 1
        assert grew("limelight_ingest_bytes_total", api="es_bulk", outcome="partial") == len(bulk)
        assert grew("limelight_ingest_bytes_total", api="es_bulk", outcome="unauthorised") == 0
        assert grew("limelight_http_requests_total", route="/es/{index}/_bulk", method="POST",
                    status="200") == 1  # fmt: skip
        assert grew("limelight_http_requests_total", route="/services/collector", method="POST",
                    status="401") == 1  # fmt: skip

    wait_for(server, counted)
