"""The console's signing key: made once per data directory, never read half written."""

from __future__ import annotations

import errno
import stat
import threading
from pathlib import Path

import pytest

from limelight.auth import sessions
from limelight.auth.sessions import KEY_FILE, SigningKeyUnusable, signing_key
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


def test_a_process_starting_while_the_key_is_being_made_gets_the_same_whole_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes start on an empty data directory: while the first makes its key,
    the second goes all the way through; both sign with one whole key."""
    settings = Settings(data_dir=tmp_path)
    real = sessions.secrets.token_hex
    theirs: list[bytes] = []

    def token_hex(n: int) -> str:
        if not theirs:
            theirs.append(b"")
            theirs[0] = signing_key(settings)  # the other process
        return real(n)

    monkeypatch.setattr(sessions.secrets, "token_hex", token_hex)
    mine = signing_key(settings)
    assert len(mine) == 64 and mine == theirs[0] == (tmp_path / KEY_FILE).read_bytes().strip()
    assert [p.name for p in tmp_path.iterdir()] == [KEY_FILE]


def test_a_filesystem_without_hard_links_is_a_clear_error_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(src: str, dst: str) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted", src, None, dst)

    monkeypatch.setattr(sessions.os, "link", no_links)
    with pytest.raises(
        SigningKeyUnusable, match=r"may not support hard links\); set LIMELIGHT_SECRET_KEY"
    ):
        signing_key(Settings(data_dir=tmp_path))
    assert list(tmp_path.iterdir()) == []


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


@pytest.mark.parametrize("held", [b"", b"0123456789abcdef"])
def test_a_key_file_without_a_usable_key_is_refused_with_what_to_do(
    tmp_path: Path, held: bytes
) -> None:
    (tmp_path / KEY_FILE).write_bytes(held)
    with pytest.raises(SigningKeyUnusable, match="remove it to have a new one made"):
        signing_key(Settings(data_dir=tmp_path))
