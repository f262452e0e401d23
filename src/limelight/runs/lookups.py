"""What a run looks up before it runs: the types its keys are stored as, the paths below
them. The statements are the query layer's, with the tenant filter and the limits."""

from __future__ import annotations

from collections.abc import Sequence

from limelight.query.lookups import paths_below_statement, stored_types_statement
from limelight.query.scope import Scope
from limelight.runs.limits import RunLimits
from limelight.store.events.base import EventStore
from limelight.tenant import Tenant


def _scope(tenant: Tenant, limits: RunLimits) -> Scope:
    return Scope(tenant.workspace_id, tenant.environment_id, limits.run_options())


def stored_types(
    store: EventStore, tenant: Tenant, paths: Sequence[str], limits: RunLimits
) -> dict[str, frozenset[str]]:
    """Per path asked for, the types its values are stored as; a path no event holds is left out."""
    if not paths:
        return {}
    st = stored_types_statement(_scope(tenant, limits), store.paths_table, paths)
    rows = store.query(st.sql, st.params, st.columns).rows
    return {row["path"]: frozenset(row["types"]) for row in rows}


def paths_below(
    store: EventStore, tenant: Tenant, keys: Sequence[str], most: int, limits: RunLimits
) -> dict[str, dict[str, frozenset[str]] | None]:
    """Per key, the paths below it (``key.x``, ``key.x.y``) that the tenant's events hold,
    with their types; None for a key with more than ``most`` of them.

    An object is stored as the paths below its key, so these tell whether the key
    holds one (see ``query.keys``). Each key reads at most ``most + 1`` paths.
    """
    if not keys:
        return {}
    st = paths_below_statement(_scope(tenant, limits), store.paths_table, keys, most)
    found: dict[str, dict[str, frozenset[str]]] = {key: {} for key in keys}
    for row in store.query(st.sql, st.params, st.columns).rows:
        found[row["prefix"][:-1]][row["path"]] = frozenset(row["types"])
    return {key: (paths if len(paths) <= most else None) for key, paths in found.items()}
