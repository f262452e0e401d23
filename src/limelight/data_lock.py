"""The serving process's hold on its data directory (embedded mode).

chDB allows one process per data directory, and finds out only once its
engine starts, after the server has printed and created things, with an error
that does not say who holds it. ``limelight serve`` takes an exclusive
``flock`` on ``serve.lock`` first: a second server is told at once which
process holds the directory, and the lock goes with the process however it
ends (the kernel releases it), so a crash leaves nothing to clean up.

The lock file also says where the holder answers (its loopback address), and
``operator.token``, readable by the operator alone, holds a secret made at each
start: the CLI uses both to ask the serving process for what only it can do,
such as a consistent backup of the events engine it holds.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from limelight.errors import LimelightError

LOCK_FILE = "serve.lock"
TOKEN_FILE = "operator.token"


@dataclass(frozen=True)
class Holder:
    """The process serving a data directory."""

    pid: int
    url: str  # where it answers on loopback

    def describe(self) -> str:
        return f"limelight serve, pid {self.pid}, {self.url}"


class DataDirHeld(LimelightError):
    def __init__(self, data_dir: Path, holder: Holder | None) -> None:
        who = holder.describe() if holder else "another process"
        super().__init__(f"the data directory {data_dir} is in use by {who}")
        self.holder = holder


def _read_holder(path: Path) -> Holder | None:
    try:
        doc = json.loads(path.read_text())
        return Holder(int(doc["pid"]), str(doc["url"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # written a moment later, or by something else


def holder(data_dir: Path) -> Holder | None:
    """The process serving ``data_dir`` now, or None when none does."""
    path = data_dir / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(path) or Holder(0, "")
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


class DataDirLock:
    """Held by the serving process from before anything is created until it exits."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._fd: int | None = None

    def acquire(self, url: str) -> None:
        """Take the directory or raise ``DataDirHeld`` naming its holder; creates the
        directory and the lock file only when no other process holds them."""
        path = self.data_dir / LOCK_FILE
        self.data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise DataDirHeld(self.data_dir, _read_holder(path)) from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "url": url}).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)
            self._fd = None


def new_operator_token(data_dir: Path) -> str:
    """A fresh secret in ``operator.token``, readable by its owner alone."""
    token = secrets.token_urlsafe(32)
    path = data_dir / TOKEN_FILE
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token)
    return token


def read_operator_token(data_dir: Path) -> str | None:
    try:
        return (data_dir / TOKEN_FILE).read_text().strip() or None
    except OSError:
        return None
