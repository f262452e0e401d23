"""The console's signing key: made once per data directory, never read half written."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from limelight.auth import sessions
from limelight.auth.sessions import KEY_FILE, signing_key
from limelight.settings import Settings


def test_the_key_is_made_once_private_and_kept(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    key = signing_key(settings)
    assert len(key) == 64 and int(key, 16) >= 0
    assert stat.S_IMODE((tmp_path / KEY_FILE).stat().st_mode) == 0o600
    assert signing_key(settings) == key
    assert [p.name for p in tmp_path.iterdir()] == [KEY_FILE]  # no temporary file left
    assert signing_key(Settings(data_dir=tmp_path, secret_key="from-the-environment")) == (
        b"from-the-environment"
    )


def test_a_process_that_loses_the_race_uses_the_winners_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes start on an empty data directory: the second links its key just
    before the first does; both sign with the second's key."""
    settings = Settings(data_dir=tmp_path)
    real_link = os.link
    theirs: list[bytes] = []
    calls = 0

    def link_after_another_process(src: str, dst: str) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            theirs.append(signing_key(settings))  # the other process, all the way through
        real_link(src, dst)

    monkeypatch.setattr(sessions.os, "link", link_after_another_process)
    mine = signing_key(settings)
    assert calls == 2 and mine == theirs[0] and len(mine) == 64
    assert [p.name for p in tmp_path.iterdir()] == [KEY_FILE]


def test_processes_starting_together_all_get_the_same_whole_key(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    barrier = threading.Barrier(16)
    keys: list[bytes] = []

    def start() -> None:
        barrier.wait()
        keys.append(signing_key(settings))

    threads = [threading.Thread(target=start) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(keys) == 16 and len(set(keys)) == 1 and len(keys[0]) == 64


def test_an_empty_key_file_is_refused_with_what_to_do(tmp_path: Path) -> None:
    (tmp_path / KEY_FILE).write_bytes(b"")
    with pytest.raises(RuntimeError, match="remove it to have a new one made"):
        signing_key(Settings(data_dir=tmp_path))
