"""Which types the JSON paths of a tenant's events are stored as (DDL 0004-0010)."""

from __future__ import annotations

from collections.abc import Sequence

from limelight.store.events.base import EventStore, Tenant


def stored_types(
    store: EventStore, tenant: Tenant, paths: Sequence[str], max_seconds: float = 10.0
) -> dict[str, frozenset[str]]:
    """Per path asked for, the types its values are stored as; a path no event holds is left out."""
    if not paths:
        return {}
    params: dict[str, object] = {"ws": tenant.workspace_id, "env": tenant.environment_id}
    names = []
    for i, path in enumerate(paths):
        params[f"p{i}"] = path
        names.append(f"{{p{i}:String}}")
    sql = (
        f"SELECT path, groupUniqArray(type) AS types FROM {store.paths_table}"
        " WHERE workspace_id = {ws:String} AND environment_id = {env:String}"
        f" AND path IN ({', '.join(names)}) GROUP BY path"
        f" SETTINGS max_execution_time = {float(max_seconds):g}"
    )
    return {
        row["path"]: frozenset(row["types"])
        for row in store.query(sql, params, ("path", "types")).rows
    }
