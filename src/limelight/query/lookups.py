"""Statements over the paths a tenant's events hold (the ``event_paths`` table, DDL
0004-0006): which types a path is stored as, and which paths lie below a key."""

from __future__ import annotations

from collections.abc import Sequence

from limelight.query.scope import CompiledQuery, Scope
from limelight.query.sql import Params


def stored_types_statement(scope: Scope, paths_table: str, paths: Sequence[str]) -> CompiledQuery:
    """Per path asked for, the types its values are stored as (``path``, ``types``)."""
    params = Params()
    cond = scope.where(
        params, lambda p: [f"path IN ({', '.join(p.add(path, 'String') for path in paths)})"]
    )
    sql = scope.select("path, groupUniqArray(type) AS types", paths_table, cond, " GROUP BY path")
    return scope.statement(sql, params, ("path", "types"))


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
    )
    per_key = params.add(most + 1, "UInt32")
    tail = f" GROUP BY prefix, path ORDER BY prefix, path LIMIT {per_key} BY prefix"
    sql = scope.around(inner, "prefix, path, groupUniqArray(type) AS types", tail)
    return scope.statement(sql, params, ("prefix", "path", "types"))


def dataset_counts_statement(
    scope: Scope, table: str, timeframe_from: int, timeframe_to: int
) -> CompiledQuery:
    """Each dataset with events in the timeframe: how many, and the newest one's time.
    The counts read only the typed columns of the sort key."""
    params = Params()
    cond = scope.where(
        params,
        lambda p: [
            f"timestamp >= fromUnixTimestamp64Milli({p.add(timeframe_from, 'Int64')})",
            f"timestamp < fromUnixTimestamp64Milli({p.add(timeframe_to, 'Int64')})",
        ],
    )
    sql = scope.select(
        "dataset, count() AS n, toUnixTimestamp64Milli(max(timestamp)) AS last",
        table,
        cond,
        " GROUP BY dataset ORDER BY dataset",
    )
    return scope.statement(sql, params, ("dataset", "n", "last"))


def dataset_exists_statement(scope: Scope, table: str, dataset: str) -> CompiledQuery:
    """One row when the tenant has any event in ``dataset`` (the sort key answers it)."""
    params = Params()
    cond = scope.where(params, lambda p: [f"dataset = {p.add(dataset, 'String')}"])
    return scope.statement(scope.select("1 AS found", table, cond, " LIMIT 1"), params, ("found",))


def dataset_paths_statement(scope: Scope, paths_table: str, dataset: str) -> CompiledQuery:
    """Each JSON path of the dataset's events with the types it is stored as."""
    params = Params()
    cond = scope.where(params, lambda p: [f"dataset = {p.add(dataset, 'String')}"])
    sql = scope.select(
        "path, groupUniqArray(type) AS types", paths_table, cond, " GROUP BY path ORDER BY path"
    )
    return scope.statement(sql, params, ("path", "types"))


def datasets_statement(scope: Scope, paths_table: str) -> CompiledQuery:
    """The datasets whose events recorded paths (every dataset written since DDL 0010,
    whatever expired since), by name; read from the paths, never the events."""
    params = Params()
    cond = scope.where(params, lambda _: ["dataset != ''"])
    sql = scope.select("DISTINCT dataset", paths_table, cond, " ORDER BY dataset")
    return scope.statement(sql, params, ("dataset",))


def datasets_paths_statement(
    scope: Scope, paths_table: str, datasets: Sequence[str], most: int
) -> CompiledQuery:
    """Each JSON path of the events of ``datasets`` (of every dataset when empty) with the
    types it is stored as, by name, at most ``most``."""
    params = Params()

    def of_datasets(p: Params) -> list[str]:
        if not datasets:
            return []
        return [f"dataset IN ({', '.join(p.add(d, 'String') for d in datasets)})"]

    cond = scope.where(params, of_datasets)
    tail = f" GROUP BY path ORDER BY path LIMIT {params.add(most, 'UInt32')}"
    sql = scope.select("path, groupUniqArray(type) AS types", paths_table, cond, tail)
    return scope.statement(sql, params, ("path", "types"))
