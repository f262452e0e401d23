"""The embedded engine's bytes on disk: each file once, whatever links lead to it."""

from __future__ import annotations

import os
from pathlib import Path

from limelight.store.events.chdb_store import directory_bytes


def test_files_count_once_through_hard_and_symbolic_links(tmp_path: Path) -> None:
    store = tmp_path / "store" / "abc" / "uuid" / "all_1_1_0"
    store.mkdir(parents=True)
    (store / "data.bin").write_bytes(b"x" * 1000)
    (store / "columns.txt").write_bytes(b"y" * 24)
    # A mutation's new part links the files it did not change.
    mutated = store.parent / "all_1_1_0_2"
    mutated.mkdir()
    os.link(store / "data.bin", mutated / "data.bin")
    (mutated / "columns.txt").write_bytes(b"z" * 30)
    # data/<database>/<table> links to the table's folder under store/.
    (tmp_path / "data" / "limelight").mkdir(parents=True)
    (tmp_path / "data" / "limelight" / "events").symlink_to(store.parent)
    assert directory_bytes(tmp_path) == 1000 + 24 + 30


def test_a_missing_directory_is_empty(tmp_path: Path) -> None:
    assert directory_bytes(tmp_path / "never made") == 0
