"""Choose the events transport from the settings."""

from __future__ import annotations

from pathlib import Path

from limelight.settings import Settings
from limelight.store.events.base import EventStore


def open_event_store(settings: Settings) -> EventStore:
    """Build (not start) the configured store."""
    if settings.events_backend == "clickhouse":
        from limelight.store.events.server_store import ServerEventStore

        return ServerEventStore(
            settings.clickhouse_url,
            settings.clickhouse_database,
            settings.clickhouse_cluster,
            regex_dictionaries=settings.regex_dictionaries,
        )
    from limelight.store.events.buffered import BufferLimits
    from limelight.store.events.chdb_store import ChdbEventStore

    return ChdbEventStore(
        settings.data_dir / "chdb",
        settings.clickhouse_database,
        backups=backups_dir(settings),
        wal=wal_dir(settings) if settings.ingest_buffer else None,
        buffer_limits=BufferLimits(settings.ingest_buffer_bytes, settings.ingest_buffer_lag),
        regex_dictionaries=settings.regex_dictionaries,
    )


def wal_dir(settings: Settings) -> Path:
    """The write-ahead log of small batches (embedded), read back at every start."""
    return settings.data_dir / "wal"


def backups_dir(settings: Settings) -> Path:
    """Where the serving process writes backups before the CLI moves them (embedded)."""
    return settings.data_dir / "backups"
