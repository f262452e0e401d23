"""Removing events past their retention, for every tenant at once.

The one place that writes statements over events of every tenant: retention is
the deployment's job, not a tenant's request, so it does not go through the
query layer's tenant filter. Each statement names the rows it removes by
tenant, dataset and time, and nothing here ever reads an event back.

Two ways, cheapest first:
- a day partition (the table is partitioned by ``toDate(timestamp)``) whose
  every event is older than the oldest cutoff of all is dropped whole: no
  data is read or rewritten;
- the rest goes by lightweight ``DELETE`` (rows are masked at once and left
  out of every read; merges remove them from disk), one statement per retention,
  and only when a count says there are rows to delete: a ``DELETE`` that
  matches nothing still writes a new version of every part it considers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from limelight.store.events.unscoped import UnscopedReader
from limelight.tenant import Tenant

_DAY_PARTITION = re.compile(r"[0-9]{8}")  # toDate's partition id: YYYYMMDD
_BEFORE = "timestamp < fromUnixTimestamp64Milli({before:Int64}, 'UTC')"


@dataclass(frozen=True, slots=True)
class DatasetCutoff:
    """A dataset whose events older than ``before_ms`` go, whatever the default."""

    tenant: Tenant
    dataset: str
    before_ms: int


@dataclass(slots=True)
class Expired:
    """What one pass removed: whole day partitions, and rows by lightweight delete."""

    partitions: list[str]
    rows: int = 0


def _partitions_before(store: UnscopedReader, before_ms: int) -> list[str]:
    """The day partitions that hold only events older than ``before_ms``, on every node."""
    table = store.data_table
    database, name = table.split(".", 1)
    source = "system.parts"
    if store.on_cluster:
        cluster = store.on_cluster.removeprefix(" ON CLUSTER ")
        source = f"clusterAllReplicas('{cluster}', system.parts)"
    result = store.query(
        f"SELECT DISTINCT partition_id AS id FROM {source} "
        "WHERE database = {database:String} AND table = {name:String} AND active "
        "ORDER BY id",
        {"database": database, "name": name},
        ["id"],
    )
    last_day = datetime.fromtimestamp(before_ms / 1000, UTC).strftime("%Y%m%d")
    # A partition of day D holds events of [D, D + 1 day): all older than the cutoff
    # when D is before the cutoff's day. Ids compare as dates (fixed width).
    return [
        str(r["id"])
        for r in result.rows
        if _DAY_PARTITION.fullmatch(str(r["id"])) and str(r["id"]) < last_day
    ]


def _delete(store: UnscopedReader, where: str, params: dict[str, Any]) -> int:
    """Delete the rows ``where`` selects when there are any; how many there were."""
    found = store.query(f"SELECT count() AS n FROM {store.table} WHERE {where}", params, ["n"])
    count = int(found.rows[0]["n"])
    if count:
        store.command(f"DELETE FROM {store.data_table}{store.on_cluster} WHERE {where}", params)
    return count


# A dataset's key as one string: its tenant's ids and its name, which hold none of "|".
_KEY = "concat(workspace_id, '|', environment_id, '|', dataset)"
_KEY_PART = re.compile(r"[A-Za-z0-9._-]+")


def _keys(cutoffs: Sequence[DatasetCutoff]) -> list[str]:
    """The datasets' keys, bound as one Array(String) value however many datasets
    (spelled out in the statement, thousands of them would pass the engine's limit on
    a statement's size and stop every pass)."""
    keys = []
    for c in cutoffs:
        parts = (c.tenant.workspace_id, c.tenant.environment_id, c.dataset)
        if not all(_KEY_PART.fullmatch(part) for part in parts):
            raise ValueError(f"not a dataset's key: {parts!r}")  # ids and names never are
        keys.append("|".join(parts))
    return keys


def expire(
    store: UnscopedReader,
    default_before_ms: int,
    cutoffs: Sequence[DatasetCutoff],
    stopping: Callable[[], bool] = lambda: False,
) -> Expired:
    """Remove every event older than ``default_before_ms``, except in the datasets of
    ``cutoffs``, whose events go when older than their own cutoff (sooner or later).

    ``stopping`` is asked before each statement: a pass over thousands of day partitions
    held a server's stop for its whole length (the next pass takes up what is left)."""
    oldest = min([default_before_ms, *(c.before_ms for c in cutoffs)])
    expired = Expired([])
    for partition in _partitions_before(store, oldest):
        if stopping():
            return expired
        store.command(
            f"ALTER TABLE {store.data_table}{store.on_cluster} DROP PARTITION ID '{partition}'"
        )
        expired.partitions.append(partition)
    if stopping():
        return expired

    # Every dataset without a retention of its own, at the default.
    expired.rows += _delete(
        store,
        f"{_BEFORE} AND NOT has({{keys:Array(String)}}, {_KEY})",
        {"before": default_before_ms, "keys": _keys(cutoffs)},
    )
    # The others, one statement per retention (most datasets share a few).
    by_cutoff: dict[int, list[DatasetCutoff]] = {}
    for cutoff in cutoffs:
        by_cutoff.setdefault(cutoff.before_ms, []).append(cutoff)
    for before_ms, group in sorted(by_cutoff.items()):
        if stopping():
            return expired
        expired.rows += _delete(
            store,
            f"{_BEFORE} AND has({{keys:Array(String)}}, {_KEY})",
            {"before": before_ms, "keys": _keys(group)},
        )
    return expired
