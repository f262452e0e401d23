"""The newest events of an environment: an events run over all time, with the limits of
a query run (``GET /v1/events``, the plain tail)."""

from __future__ import annotations

import time
from typing import Any

from limelight.query.compile import Timeframe, compile_run
from limelight.query.spec import validate_fields
from limelight.runs.execute import execute_data
from limelight.runs.limits import RunLimits
from limelight.store.events.base import EventStore
from limelight.tenant import Tenant

# Event times may lie up to a day ahead (see ``ingest.enrich``).
AHEAD_MS = 24 * 3600 * 1000


def newest_events(
    store: EventStore, tenant: Tenant, dataset: str | None, limit: int, limits: RunLimits
) -> list[Any]:
    """The newest events of an environment (of one dataset), newest first, whole, as JSON
    (integers beyond 64 bits exact)."""
    fields = validate_fields(
        {"namespaces": [{"type": "dataset", "value": dataset}]} if dataset is not None else {}
    )
    options = limits.run_options(limit=limit)
    now = int(time.time() * 1000)
    plan = compile_run(
        fields,
        workspace_id=tenant.workspace_id,
        environment_id=tenant.environment_id,
        table=store.table,
        timeframe=Timeframe(0, now + AHEAD_MS),
        options=options,
    )
    data = execute_data(store, plan, limits, time.monotonic() + limits.max_run_seconds)
    return list(data["events"])
