"""Running one compiled plan on the events store and turning its rows into the run's data."""

from __future__ import annotations

import time
from typing import Any

import orjson

from limelight.errors import StoreError
from limelight.query.compile import Plan
from limelight.query.results import shape
from limelight.runs.limits import (
    RunLimits,
    result_too_large_message,
    store_failure_message,
    timeout_message,
)
from limelight.store.events.base import EventStore


class RunFailed(Exception):
    """A run that ends FAILED; the message is shown to the client as the run's error."""


def execute_plan(store: EventStore, plan: Plan, limits: RunLimits, deadline: float) -> bytes:
    """The run's ``data`` as JSON bytes, or ``RunFailed`` with a sentence saying why.

    ``deadline`` is on ``time.monotonic``. The engine also stops each statement at
    the run's limit (``max_execution_time`` in the compiled SQL), so an overlong
    run does not keep the CPU busy after it is reported failed.
    """
    rows_by_name: dict[str, list[dict[str, Any]]] = {}
    elapsed = 0.0
    rows_read = 0
    bytes_read = 0
    for name, statement in plan.statements.items():
        if time.monotonic() >= deadline:
            raise RunFailed(timeout_message(limits.max_run_seconds))
        try:
            result = store.query(statement.sql, statement.params)
        except StoreError as exc:
            raise RunFailed(store_failure_message(str(exc), limits)) from exc
        rows_by_name[name] = result.rows
        elapsed += result.elapsed
        rows_read += result.rows_read
        bytes_read += result.bytes_read
    data = shape(plan, rows_by_name)
    data["statistics"] = {"elapsed": elapsed, "rows_read": rows_read, "bytes_read": bytes_read}
    payload = orjson.dumps(data)
    if len(payload) > limits.max_result_bytes:
        raise RunFailed(result_too_large_message(limits))
    if time.monotonic() > deadline:
        raise RunFailed(timeout_message(limits.max_run_seconds))
    return payload
