"""The datasets of an environment, as the Datasets API and the console show them.

A dataset is listed with its event count and last event time over a timeframe
(the last 24 hours unless asked otherwise); its keys are what ClickHouse
recorded as events arrived, each with the kinds of the query semantics
(``string``, ``number``, ``boolean``, ``array``), the system fields first.
"""

from __future__ import annotations

import time
from typing import Any

from limelight.errors import NotFound, StoreError, Unavailable
from limelight.ingest.service import check_dataset
from limelight.query.keys import SYSTEM_FIELDS, kinds_of_stored
from limelight.retention import describe, retentions
from limelight.runs.limits import RunLimits, store_failure_message
from limelight.runs.lookups import dataset_counts, dataset_exists, dataset_paths
from limelight.settings import Settings
from limelight.store.events.base import EventStore
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant
from limelight.times import DAY_MS, Timeframe

DEFAULT_TIMEFRAME_MS = DAY_MS


def now_ms() -> int:
    return int(time.time() * 1000)


def timeframe(from_ms: int | None, to_ms: int | None, now: int | None = None) -> Timeframe:
    """The timeframe asked for; ``to`` defaults to now, ``from`` to 24 hours before ``to``."""
    to = to_ms if to_ms is not None else (now if now is not None else now_ms())
    return Timeframe(from_ms if from_ms is not None else to - DEFAULT_TIMEFRAME_MS, to)


def list_datasets(
    store: EventStore, tenant: Tenant, limits: RunLimits, frame: Timeframe
) -> list[dict[str, Any]]:
    """``[{name, count, last_event_at}]`` of the datasets with events in the timeframe; 400
    for a timeframe a query run would refuse."""
    limits.check_timeframe(frame.from_ms, frame.to_ms)
    try:
        counts = dataset_counts(store, tenant, frame.from_ms, frame.to_ms, limits)
    except StoreError as exc:
        raise Unavailable(store_failure_message(exc, limits)) from exc
    return [{"name": c.name, "count": c.count, "last_event_at": c.last_event_ms} for c in counts]


def with_retention(
    meta: MetaDB, settings: Settings, tenant: Tenant, datasets: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The datasets with how long each keeps its events (``retention``, ``"30d"``) and
    whether that is the deployment's default (``retention_is_default``)."""
    own = retentions(meta, tenant)
    return [d | describe(d["name"], own.get(d["name"]), settings) for d in datasets]


SYSTEM_KEYS = [{"key": key, "types": [kind]} for key, (_, kind) in SYSTEM_FIELDS.items()]


def dataset_keys(
    store: EventStore, tenant: Tenant, dataset: str, limits: RunLimits
) -> list[dict[str, Any]]:
    """``[{key, types}]``: the system fields, then every path the dataset's events hold,
    dotted, by name; 404 for a dataset without events."""
    check_dataset(dataset)
    try:
        paths = dataset_paths(store, tenant, dataset, limits)
        if not paths and not dataset_exists(store, tenant, dataset, limits):
            raise NotFound(f"no events in a dataset named {dataset!r} in this environment")
    except StoreError as exc:
        raise Unavailable(store_failure_message(exc, limits)) from exc
    keys = [{"key": path, "types": kinds_of_stored(types)} for path, types in paths.items()]
    return SYSTEM_KEYS + [k for k in keys if k["types"]]
