"""Statements over the paths a tenant's events hold (the ``event_paths`` table, DDL
0004-0006): which types a path is stored as, and which paths lie below a key."""

from __future__ import annotations

from collections.abc import Sequence

from limelight.query.plans import CompiledQuery
from limelight.query.scope import Scope
from limelight.query.sql import Params


def stored_types_statement(scope: Scope, paths_table: str, paths: Sequence[str]) -> CompiledQuery:
    """Per path asked for, the types its values are stored as (``path``, ``types``)."""
    params = Params()
    cond = scope.where(
        params, lambda p: [f"path IN ({', '.join(p.add(path, 'String') for path in paths)})"]
    )
    sql = scope.select("path, groupUniqArray(type) AS types", paths_table, cond, " GROUP BY path")
    return CompiledQuery(sql, params.values, ("path", "types"))


def paths_below_statement(
    scope: Scope, paths_table: str, keys: Sequence[str], most: int
) -> CompiledQuery:
    """Per key, up to ``most + 1`` paths below it (``key.x``, ``key.x.y``) with their
    types (``prefix`` is the key and a dot)."""
    params = Params()
    prefixes: list[str] = []

    def below(p: Params) -> list[str]:
        prefixes.extend(p.add(key + ".", "String") for key in keys)
        return [f"arrayExists(b -> startsWith(path, b), [{', '.join(prefixes)}])"]

    cond = scope.where(params, below)
    listed = f"[{', '.join(prefixes)}]"
    inner = scope.select(
        f"arrayJoin(arrayFilter(b -> startsWith(path, b), {listed})) AS prefix, path, type",
        paths_table,
        cond,
        inner=True,
    )
    per_key = params.add(most + 1, "UInt32")
    tail = f" GROUP BY prefix, path ORDER BY prefix, path LIMIT {per_key} BY prefix"
    sql = f"SELECT prefix, path, groupUniqArray(type) AS types FROM ({inner}){tail}"
    return CompiledQuery(sql + scope.settings(), params.values, ("prefix", "path", "types"))
