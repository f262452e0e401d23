"""Reading events back with their system fields (tests, the console, query results)."""

from __future__ import annotations

from typing import Any

from limelight.event_json import to_event
from limelight.store.events.base import EventStore
from limelight.tenant import Tenant

# The columns that make a stored event whole again; see ``to_event``.
EVENT_COLUMNS = (
    "raw, toUnixTimestamp64Milli(timestamp) AS _timestamp, dataset AS _dataset, "
    "service AS _service, namespace AS _namespace, id AS _id"
)
EVENT_COLUMN_NAMES = ("raw", "_timestamp", "_dataset", "_service", "_namespace", "_id")


def read_events(
    store: EventStore, tenant: Tenant, dataset: str | None = None, limit: int = 1000
) -> list[dict[str, Any]]:
    """The newest events of one environment (optionally one dataset), newest first."""
    where = "workspace_id = {ws:String} AND environment_id = {env:String}"
    params: dict[str, Any] = {
        "ws": tenant.workspace_id,
        "env": tenant.environment_id,
        "lim": limit,
    }
    if dataset is not None:
        where += " AND dataset = {ds:String}"
        params["ds"] = dataset
    sql = (
        f"SELECT {EVENT_COLUMNS} FROM {store.table} WHERE {where} "
        "ORDER BY timestamp DESC, id DESC LIMIT {lim:UInt32}"
    )
    return [to_event(r) for r in store.query(sql, params, EVENT_COLUMN_NAMES).rows]
