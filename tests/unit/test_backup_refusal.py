"""A backup covers the embedded engine alone: any other events store is refused with the
API's 409, before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from limelight.backups import make_backup
from limelight.errors import Conflict
from limelight.settings import Settings
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.store.events.server_store import ServerEventStore
from limelight.store.meta.db import MetaDB
from tests.held_store import PassingStore


def test_a_store_that_is_not_the_embedded_engine_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    meta = MetaDB(f"sqlite:///{tmp_path / 'meta.db'}")
    embedded = Settings(data_dir=tmp_path)
    built = ChdbEventStore(tmp_path / "chdb")  # built, never started
    refused = [
        (embedded, ServerEventStore("http://127.0.0.1:1")),
        (embedded, PassingStore(built)),  # in front of the engine, not the engine
        (Settings(data_dir=tmp_path, events_backend="clickhouse"), built),
    ]
    try:
        for settings, events in refused:
            target = tmp_path / "backups" / "one"
            with pytest.raises(Conflict, match="backups cover the embedded mode") as caught:
                make_backup(settings, meta, events, target)
            assert caught.value.status == 409
            assert not target.exists()
    finally:
        meta.dispose()
