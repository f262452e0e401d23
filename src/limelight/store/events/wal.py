"""The write-ahead log of small inserts: what is acknowledged before the engine has it.

A request's rows, encoded as the INSERT will send them (``base.encode_rows``), are
appended to the open segment file and made durable by one ``fdatasync`` for every
request that appended meanwhile (group commit on the file: whoever finds no sync
running syncs all that is written, the others wait for it). Only then is the request
answered. A background inserter (``buffered.py``) closes the segment, writes its
records to the engine in large INSERTs, and removes the file; at start, segments left
by a process that stopped or died are read back and inserted again.

A record is ``length, crc32`` then its payload; a torn last record (the process died
while writing it, so it was never acknowledged) fails its check, and the segment is
cut there. Segment names are the time in nanoseconds then random characters: unique
across restarts, and in the order they were opened.
"""

from __future__ import annotations

import os
import secrets
import struct
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from limelight.errors import StoreError
from limelight.tenant import Tenant

SUFFIX = ".wal"
_FRAME = struct.Struct("<II")  # payload length, crc32 of the payload
_HEAD = struct.Struct("<HHIii")  # workspace, environment lengths; rows; first, last day


@dataclass(slots=True)
class Record:
    """One request's rows for one tenant (at most 100 days of them: the engine's bound
    on partitions an INSERT may write, ``ingest.service.store_rows``)."""

    tenant: Tenant
    rows: int
    first_day: int
    last_day: int
    body: bytes  # TabSeparated lines, as ``encode_rows`` made them

    def encode(self) -> bytes:
        ws = self.tenant.workspace_id.encode()
        env = self.tenant.environment_id.encode()
        payload = b"".join(
            (_HEAD.pack(len(ws), len(env), self.rows, self.first_day, self.last_day), ws, env)
        )
        payload += self.body
        return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload

    @classmethod
    def decode(cls, payload: bytes) -> Record:
        ws_len, env_len, rows, first, last = _HEAD.unpack_from(payload)
        at = _HEAD.size
        ws = payload[at : at + ws_len].decode()
        env = payload[at + ws_len : at + ws_len + env_len].decode()
        return cls(Tenant(ws, env), rows, first, last, payload[at + ws_len + env_len :])


class SegmentFile:
    """One segment open for appending; ``sync_to`` makes what is written durable, one
    ``fdatasync`` for all the appends that came before it."""

    def __init__(self, directory: Path, name: str) -> None:
        self.name = name
        self.path = directory / f"{name}{SUFFIX}"
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        self.written = 0
        self._synced = 0
        self._syncing = False
        self._changed = threading.Condition(threading.Lock())

    def write(self, data: bytes) -> int:
        """Append ``data``; the offset its end is at. Called under the log's lock, so
        records are whole and in order."""
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            # A part of a record would hide every record after it from the reader: the
            # file goes back to where this one began (a full disk, say, then frees up).
            os.ftruncate(self._fd, self.written)
            raise StoreError(f"cannot append to the write-ahead log {self.path}: {exc}") from exc
        with self._changed:
            self.written += len(data)
            return self.written

    def sync_to(self, end: int) -> None:
        """Return once the file is durable up to ``end``."""
        with self._changed:
            while self._synced < end:
                if self._syncing:
                    self._changed.wait()
                    continue
                self._syncing = True
                target = self.written
                self._changed.release()
                try:
                    os.fdatasync(self._fd)
                except OSError as exc:
                    raise StoreError(f"cannot sync the write-ahead log {self.path}: {exc}") from exc
                finally:
                    self._changed.acquire()
                    self._syncing = False
                    self._changed.notify_all()
                self._synced = max(self._synced, target)

    def close(self) -> None:
        """Sync what is written and close (a sealed segment is read from memory)."""
        self.sync_to(self.written)
        os.close(self._fd)


def new_segment(directory: Path) -> SegmentFile:
    """A new, empty segment, its name durable in the directory before any record is
    acknowledged from it."""
    segment = SegmentFile(directory, f"{time.time_ns():020d}-{secrets.token_hex(5)}")
    sync_directory(directory)
    return segment


def sync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_segment(path: Path) -> None:
    """A segment whose records are all in the engine. Not synced: a segment that comes
    back after a crash is inserted again, and only its missing rows are written."""
    path.unlink(missing_ok=True)


def segments(directory: Path) -> list[Path]:
    """The segments in the directory, oldest first."""
    return sorted(directory.glob(f"*{SUFFIX}"))


def read_segment(path: Path) -> list[Record]:
    """The whole records of a segment; a torn or corrupt tail is cut off the file (it
    was never acknowledged: a request is answered after its record is synced)."""
    data = path.read_bytes()
    records, good = _records(data)
    if good < len(data):
        with open(path, "r+b") as f:
            f.truncate(good)
            os.fsync(f.fileno())
    return records


def _records(data: bytes) -> tuple[list[Record], int]:
    records: list[Record] = []
    at = 0
    for payload, end in _frames(data):
        records.append(Record.decode(payload))
        at = end
    return records, at


def _frames(data: bytes) -> Iterator[tuple[bytes, int]]:
    at = 0
    while at + _FRAME.size <= len(data):
        length, crc = _FRAME.unpack_from(data, at)
        start, end = at + _FRAME.size, at + _FRAME.size + length
        if end > len(data) or length < _HEAD.size:
            return
        payload = data[start:end]
        if zlib.crc32(payload) != crc:
            return
        yield payload, end
        at = end
