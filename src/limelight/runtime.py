"""The long-lived parts of a running server, built from the settings and injected."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from limelight import metrics
from limelight.alerts.evaluator import Evaluator
from limelight.alerts.service import AlertService
from limelight.auth.alert_secrets import reseal_all
from limelight.auth.known_keys import KnownKeys
from limelight.auth.sealing import Sealer
from limelight.auth.throttle import FailedAuthThrottle
from limelight.ingest.group_commit import GroupCommit
from limelight.ingest.past_days import PastDays
from limelight.ingest.service import RowSink
from limelight.ratelimit import MemoryCounts, RedisCounts, WindowCounts
from limelight.retention import Retention
from limelight.runs import QueryRunService
from limelight.settings import Settings
from limelight.store.events import EventStore, open_event_store
from limelight.store.meta.db import MetaDB
from limelight.store.meta.rate_counts import SqlCounts


def shared_counts(settings: Settings, meta: MetaDB) -> WindowCounts:
    """Where rate limits count: Redis when set, else the metadata database in server mode
    (several API processes share one limit), else this process's memory."""
    if settings.redis_url:
        return RedisCounts(settings.redis_url)
    if settings.events_backend == "clickhouse":
        return SqlCounts(meta)
    return MemoryCounts()


def buffered(settings: Settings) -> bool:
    """Whether the events store gathers small batches itself (no group commit in front)."""
    return settings.events_backend == "clickhouse" or settings.ingest_buffer


@dataclass
class Runtime:
    settings: Settings
    meta: MetaDB
    events: EventStore
    runs: QueryRunService
    alerts: AlertService
    evaluator: Evaluator
    # The failed-authentication limits, shared by the console and the OAuth endpoints.
    throttle: FailedAuthThrottle
    retention: Retention
    # Where ingest stores rows: the events store (the embedded one buffers small batches
    # in its write-ahead log, a ClickHouse server gathers them itself: async_insert), or,
    # with the buffer off, the embedded engine with small concurrent batches grouped.
    ingest: RowSink
    # API keys resolved before, taken without a database read while it is unchanged.
    keys: KnownKeys
    # Each environment's budget of days of past events a minute (ingest/past_days.py).
    past_days: PastDays
    started: bool = field(default=False)

    @classmethod
    def build(cls, settings: Settings) -> Runtime:
        """Construct without I/O; ``start`` opens engines and applies migrations."""
        meta, events = MetaDB(settings.resolved_database_url), open_event_store(settings)
        counts = shared_counts(settings, meta)
        sealer = Sealer.of_settings(settings)
        return cls(
            settings,
            meta,
            events,
            QueryRunService(settings, meta, events, counts),
            AlertService(settings, meta, sealer=sealer, counts=counts),
            Evaluator(settings, meta, events, counts=counts, sealer=sealer),
            FailedAuthThrottle(settings, counts=counts),
            Retention(settings, meta, events),
            events if buffered(settings) else GroupCommit(events),
            KnownKeys(meta),
            PastDays(counts, per_minute=settings.past_days_per_minute),
        )

    @cached_property
    def store_sizes(self) -> metrics.Readings:
        """The stores' bytes on disk, read when /metrics is scraped (kept a few seconds)."""
        return metrics.store_sizes(self.events.disk_bytes, self.meta.disk_bytes)

    def start(self) -> None:
        if self.started:
            return
        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        with self.meta.startup_lock():  # the events DDL too: processes take turns
            self.meta.migrate(sealer=self.alerts.sealer)
            # The last step of a key rotation: what a previous key sealed, the newest
            # key seals now (once: the processes after the first find nothing to do).
            reseal_all(self.meta, self.alerts.sealer)
            self.events.start()
        self.runs.start()
        if self.settings.alerts_evaluate:
            self.evaluator.start()
        if self.settings.retention_enforce:
            self.retention.start()
        self.started = True

    def close(self) -> None:
        self.retention.close()
        self.evaluator.close()
        self.runs.close()
        self.events.close()
        self.meta.dispose()
        self.started = False
