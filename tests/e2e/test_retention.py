"""Retention in a serving process: its background pass removes what is past each dataset's
retention, and keeps the rest."""

from __future__ import annotations

import time
from pathlib import Path

from limelight.times import DAY_MS
from tests import web
from tests.support import launch


def test_the_server_removes_events_past_their_datasets_retention(tmp_path: Path) -> None:
    # A pass every 0.6 s, the default of 30 days.
    server = launch(
        tmp_path / "data",
        {"LIMELIGHT_RETENTION_DAYS": "30", "LIMELIGHT_RETENTION_EVERY_MINUTES": "0.01"},
    )
    try:
        tenant = server.new_tenant()
        headers = {"Authorization": tenant.admin_key}
        kept_longer = web.put(
            f"{server.url}/v1/datasets/audit/retention", json={"retention": "60d"}, headers=headers
        )
        assert kept_longer.status_code == 200, kept_longer.text
        now = int(time.time() * 1000)
        for dataset in ("logs", "audit"):
            events = [{"age": age, "timestamp": now - age * DAY_MS} for age in (45, 20, 1)]
            assert server.send(tenant.ingest_key, dataset, events).status_code == 202

        def left() -> set[tuple[str, int]]:
            return {(e["_dataset"], e["age"]) for e in server.read(tenant.admin_key)}

        def logged() -> bool:
            return "retention removed 0 day partitions and 1 events" in server.log_path.read_text()

        deadline = time.monotonic() + 60
        while not logged() and time.monotonic() < deadline:
            time.sleep(0.3)
        assert logged()
        assert left() == {("logs", 20), ("logs", 1), ("audit", 45), ("audit", 20), ("audit", 1)}
    finally:
        server.stop()
