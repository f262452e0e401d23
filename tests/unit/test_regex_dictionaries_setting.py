"""Regexes are looked up in the text indexes' dictionaries, every workspace's tokens,
only where the settings allow it, and never on a cluster (each shard holds its own)."""

from __future__ import annotations

from pathlib import Path

import pytest

from limelight.settings import Settings
from limelight.store.events.factory import open_event_store
from limelight.store.events.server_store import ServerEventStore


@pytest.mark.parametrize("backend", ["chdb", "clickhouse"])
def test_the_dictionaries_are_read_only_when_the_settings_allow(
    tmp_path: Path, backend: str
) -> None:
    default = open_event_store(Settings(data_dir=tmp_path, events_backend=backend))
    assert default.text_dictionaries is None
    allowed = Settings(data_dir=tmp_path, events_backend=backend, regex_dictionaries=True)
    assert open_event_store(allowed).text_dictionaries == "limelight.events"


def test_a_cluster_never_reads_one_shards_dictionaries() -> None:
    store = ServerEventStore("http://127.0.0.1:1/x", cluster="c", regex_dictionaries=True)
    assert store.text_dictionaries is None
