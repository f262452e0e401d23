"""Which types the JSON paths of a tenant's events are stored as (DDL 0004-0006)."""

from __future__ import annotations

from collections.abc import Sequence

from limelight.store.events.base import EventStore
from limelight.tenant import Tenant


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


def paths_below(
    store: EventStore, tenant: Tenant, keys: Sequence[str], most: int, max_seconds: float = 10.0
) -> dict[str, dict[str, frozenset[str]] | None]:
    """Per key, the paths below it (``key.x``, ``key.x.y``) that the tenant's events hold,
    with their types; None for a key with more than ``most`` of them.

    An object is stored as the paths below its key, so these tell whether the key
    holds one (see ``query.keys``). Each key reads at most ``most + 1`` paths.
    """
    if not keys:
        return {}
    params: dict[str, object] = {
        "ws": tenant.workspace_id,
        "env": tenant.environment_id,
        "per_key": most + 1,
    }
    names = []
    for i, key in enumerate(keys):
        params[f"b{i}"] = key + "."
        names.append(f"{{b{i}:String}}")
    prefixes = f"[{', '.join(names)}]"
    sql = (
        "SELECT prefix, path, groupUniqArray(type) AS types FROM ("
        f" SELECT arrayJoin(arrayFilter(p -> startsWith(path, p), {prefixes})) AS prefix,"
        f" path, type FROM {store.paths_table}"
        " WHERE workspace_id = {ws:String} AND environment_id = {env:String}"
        f" AND arrayExists(p -> startsWith(path, p), {prefixes})"
        ") GROUP BY prefix, path ORDER BY prefix, path LIMIT {per_key:UInt32} BY prefix"
        f" SETTINGS max_execution_time = {float(max_seconds):g}"
    )
    found: dict[str, dict[str, frozenset[str]]] = {key: {} for key in keys}
    for row in store.query(sql, params, ("prefix", "path", "types")).rows:
        found[row["prefix"][:-1]][row["path"]] = frozenset(row["types"])
    return {key: (paths if len(paths) <= most else None) for key, paths in found.items()}
