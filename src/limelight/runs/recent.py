"""The newest events of an environment: an events run over all time (or the timeframe
asked for), with the limits of a query run (``GET /v1/events``, the plain tail)."""

from __future__ import annotations

import time
from typing import Any

from limelight.query.compile import Timeframe, compile_run
from limelight.query.spec import validate_fields
from limelight.runs.execute import execute_data
from limelight.runs.limits import RunLimits, check_epoch, check_order
from limelight.store.events.base import EventStore
from limelight.tenant import Tenant
from limelight.times import DAY_MS

# Event times may lie up to a day ahead (see ``ingest.enrich``).
AHEAD_MS = DAY_MS


def newest_events(
    store: EventStore,
    tenant: Tenant,
    dataset: str | None,
    limit: int,
    limits: RunLimits,
    from_ms: int | None = None,
    to_ms: int | None = None,
) -> list[Any]:
    """The newest events of an environment (of one dataset), newest first, whole, as JSON
    (integers beyond 64 bits exact); between ``from_ms`` (inclusive) and ``to_ms``
    (exclusive) when given, else over all time. 400 naming the field for a reversed
    timeframe or one wholly before any stored event."""
    if from_ms is not None and to_ms is not None:
        check_order(from_ms, to_ms)
    check_epoch(from_ms, to_ms)
    fields = validate_fields(
        {"namespaces": [{"type": "dataset", "value": dataset}]} if dataset is not None else {}
    )
    options = limits.run_options(limit=limit)
    until = to_ms if to_ms is not None else int(time.time() * 1000) + AHEAD_MS
    plan = compile_run(
        fields,
        workspace_id=tenant.workspace_id,
        environment_id=tenant.environment_id,
        table=store.table,
        dictionaries=store.text_dictionaries,
        timeframe=Timeframe(from_ms or 0, until),
        options=options,
    )
    data = execute_data(store, plan, limits, time.monotonic() + limits.max_run_seconds)
    return list(data["events"])
