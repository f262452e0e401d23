"""How long events are kept: the deployment's default and each dataset's own.

A dataset keeps its events for ``LIMELIGHT_RETENTION_DAYS`` unless it is given
a retention of its own (the Datasets API, ``limelight datasets retention``),
longer or shorter. ``Retention`` applies them in the background: every
``retention_every_minutes`` it removes from the engine what is past its time
(``store.events.expiry``: whole day partitions where it can, else lightweight
deletes). An event past its retention may stay readable until the next pass.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from limelight.errors import BadRequest
from limelight.ingest.service import check_dataset
from limelight.settings import Settings
from limelight.store.events.base import EventStore
from limelight.store.events.expiry import DatasetCutoff, Expired, expire
from limelight.store.events.unscoped import unscoped
from limelight.store.meta import retention_repo as repo
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow
from limelight.tenant import Tenant
from limelight.times import DAY, HOUR, duration_error, format_duration, parse_duration

log = logging.getLogger("limelight.retention")

# From an hour (a dataset of debug logs) to ten years (an audit trail).
RETENTION_RANGE = (HOUR, 3650 * DAY)


def default_seconds(settings: Settings) -> int:
    return round(settings.retention_days * DAY)


def parse_retention(text: Any) -> int | None:
    """Seconds of a retention such as ``"7d"``; None for ``None`` or ``"default"`` (the
    deployment's); ``BadRequest`` naming the field for anything else."""
    if text is None or text == "default":
        return None
    problem = (
        duration_error(text, RETENTION_RANGE)
        if isinstance(text, str)
        else 'a duration such as "12h" or "7d", "default" or null'
    )
    if problem:
        raise BadRequest(
            message="Invalid retention", errors=[{"field": "retention", "message": problem}]
        )
    return parse_duration(text)


def set_dataset_retention(
    meta: MetaDB, settings: Settings, tenant: Tenant, dataset: str, text: Any
) -> dict[str, Any]:
    """Give the dataset a retention of its own, or back the default; what now holds."""
    check_dataset(dataset)
    seconds = parse_retention(text)
    with meta.session(immediate=True) as s:
        repo.set_retention(s, tenant, dataset, seconds)
    return describe(dataset, seconds, settings)


def describe(dataset: str, seconds: int | None, settings: Settings) -> dict[str, Any]:
    """``{name, retention, retention_is_default}`` as the API and the CLI show it."""
    return {
        "name": dataset,
        "retention": format_duration(seconds or default_seconds(settings)),
        "retention_is_default": seconds is None,
    }


def retentions(meta: MetaDB, tenant: Tenant) -> dict[str, int]:
    """The tenant's datasets with a retention of their own, in seconds."""
    with meta.session() as s:
        return repo.retention_of(s, tenant)


class Retention:
    """Removes events past their retention, once or every ``retention_every_minutes``."""

    def __init__(
        self,
        settings: Settings,
        meta: MetaDB,
        events: EventStore,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._meta, self._events, self._clock = meta, events, clock
        self.default = default_seconds(settings)
        self.every = settings.retention_every_minutes * 60
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def apply(self) -> Expired:
        """One pass: every event past its dataset's retention goes."""
        now_ms = int(self._clock().timestamp() * 1000)
        with self._meta.session() as s:
            overrides = repo.every_retention(s)
        cutoffs = [
            DatasetCutoff(tenant, dataset, now_ms - seconds * 1000)
            for tenant, dataset, seconds in overrides
        ]
        expired = expire(
            unscoped(self._events), now_ms - self.default * 1000, cutoffs, self._stop.is_set
        )
        if expired.partitions or expired.rows:
            log.info(
                "retention removed %d day partitions and %d events by delete",
                len(expired.partitions),
                expired.rows,
                extra={"partitions": expired.partitions, "rows": expired.rows},
            )
        return expired

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="retention", daemon=True)
            self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        self._thread = None

    def _loop(self) -> None:
        delay = min(60.0, self.every)  # the first pass soon, not while the server starts
        while not self._stop.wait(delay):
            try:
                self.apply()
            except Exception:
                log.exception("applying retention failed; trying again at the next pass")
            delay = self.every
