"""The datasets of a tenant: event counts and last event times, and the paths of each.

Every statement carries the tenant filter. The counts read only the typed
columns of the sort key; the paths come from ``event_paths`` (DDL 0007-0010),
which ClickHouse fills as events arrive, so listing a dataset's keys never
reads its events.
"""

from __future__ import annotations

from dataclasses import dataclass

from limelight.store.events.base import EventStore, Tenant

TENANT = "workspace_id = {ws:String} AND environment_id = {env:String}"


@dataclass(frozen=True, slots=True)
class DatasetCount:
    name: str
    count: int
    last_event_ms: int


def _params(tenant: Tenant) -> dict[str, object]:
    return {"ws": tenant.workspace_id, "env": tenant.environment_id}


def dataset_counts(
    store: EventStore, tenant: Tenant, from_ms: int, to_ms: int, max_seconds: float = 10.0
) -> list[DatasetCount]:
    """Each dataset with events in ``[from_ms, to_ms)``: how many, and the newest one's time."""
    sql = (
        "SELECT dataset, count() AS n, toUnixTimestamp64Milli(max(timestamp)) AS last"
        f" FROM {store.table} WHERE {TENANT}"
        " AND timestamp >= fromUnixTimestamp64Milli({frm:Int64})"
        " AND timestamp < fromUnixTimestamp64Milli({to:Int64})"
        " GROUP BY dataset ORDER BY dataset"
        f" SETTINGS max_execution_time = {float(max_seconds):g}"
    )
    params = {**_params(tenant), "frm": from_ms, "to": to_ms}
    rows = store.query(sql, params, ("dataset", "n", "last")).rows
    return [DatasetCount(r["dataset"], int(r["n"]), int(r["last"])) for r in rows]


def dataset_exists(store: EventStore, tenant: Tenant, dataset: str) -> bool:
    """Whether the tenant has any event in ``dataset`` (the sort key answers it)."""
    sql = f"SELECT 1 AS found FROM {store.table} WHERE {TENANT} AND dataset = {{ds:String}} LIMIT 1"
    return bool(store.query(sql, {**_params(tenant), "ds": dataset}, ("found",)).rows)


def dataset_paths(
    store: EventStore, tenant: Tenant, dataset: str, max_seconds: float = 10.0
) -> dict[str, frozenset[str]]:
    """Each JSON path of the dataset's events with the types it is stored as."""
    sql = (
        f"SELECT path, groupUniqArray(type) AS types FROM {store.paths_table}"
        f" WHERE {TENANT} AND dataset = {{ds:String}} GROUP BY path ORDER BY path"
        f" SETTINGS max_execution_time = {float(max_seconds):g}"
    )
    rows = store.query(sql, {**_params(tenant), "ds": dataset}, ("path", "types")).rows
    return {r["path"]: frozenset(r["types"]) for r in rows}
