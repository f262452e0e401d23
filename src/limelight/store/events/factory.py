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
            settings.clickhouse_url, settings.clickhouse_database, settings.clickhouse_cluster
        )
    from limelight.store.events.chdb_store import ChdbEventStore

    return ChdbEventStore(
        settings.data_dir / "chdb", settings.clickhouse_database, backups=backups_dir(settings)
    )


def backups_dir(settings: Settings) -> Path:
    """Where the serving process writes backups before the CLI moves them (embedded)."""
    return settings.data_dir / "backups"
