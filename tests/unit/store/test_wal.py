"""The write-ahead log's segments on disk: records read back as written, a torn or
corrupt tail cut off (it was never acknowledged), names in the order they were made."""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from limelight.errors import StoreError
from limelight.store.events import wal
from limelight.tenant import Tenant

TENANT = Tenant("ws_ü", "env\t1")


def record(n: int) -> wal.Record:
    return wal.Record(TENANT, n, 20_000 + n, 20_001 + n, b"line %d\\twith\\ttabs" % n)


def test_records_come_back_as_written(tmp_path: Path) -> None:
    segment = wal.new_segment(tmp_path)
    for n in range(3):
        segment.write(record(n).encode())
    segment.close()
    assert wal.read_segment(segment.path) == [record(n) for n in range(3)]


def test_a_torn_last_record_is_cut_off_the_file(tmp_path: Path) -> None:
    segment = wal.new_segment(tmp_path)
    whole = segment.write(record(0).encode())
    torn = record(1).encode()
    segment.write(torn[:-3])
    segment.close()
    assert wal.read_segment(segment.path) == [record(0)]
    assert segment.path.stat().st_size == whole
    # Appends after a restart go to a new segment; this one reads the same again.
    assert wal.read_segment(segment.path) == [record(0)]


def test_a_corrupt_record_ends_the_segment(tmp_path: Path) -> None:
    segment = wal.new_segment(tmp_path)
    first = segment.write(record(0).encode())
    segment.write(record(1).encode())
    segment.close()
    data = bytearray(segment.path.read_bytes())
    data[first + 12] ^= 0xFF  # a byte of the second record's payload
    segment.path.write_bytes(bytes(data))
    assert wal.read_segment(segment.path) == [record(0)]


def test_segments_list_oldest_first(tmp_path: Path) -> None:
    made = []
    for _ in range(3):
        s = wal.new_segment(tmp_path)
        s.close()
        made.append(s.path)
    assert wal.segments(tmp_path) == sorted(made)


def test_appends_are_written_by_one_sync_in_order_and_handed_over_once(tmp_path: Path) -> None:
    """Appends from many threads wait in memory; each sync writes those waiting and hands
    them to its caller's ``written`` before the file is synced, so each appender returns
    once its record is in the file and was handed over, once."""
    segment: wal.SegmentFile[int] = wal.new_segment(tmp_path)
    handed: list[int] = []
    lock = threading.Lock()
    appended: list[int] = []

    def append(n: int) -> None:
        with lock:  # the log's lock: records whole and in order
            end = segment.write(record(n).encode(), n)
            appended.append(n)
        segment.sync_to(end, handed.extend)
        assert n in handed

    threads = [threading.Thread(target=append, args=(n,)) for n in range(200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    segment.close()
    assert handed == appended and sorted(handed) == list(range(200))
    assert wal.read_segment(segment.path) == [record(n) for n in appended]


def test_appends_the_file_cannot_take_fail_and_are_not_handed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails (a full disk) leaves the file as it was; the appends it held
    go to ``lost`` and their syncs fail; later appends are written where they began."""
    segment: wal.SegmentFile[int] = wal.new_segment(tmp_path)
    written: list[int] = []
    lost: list[int] = []
    first = segment.write(record(0).encode(), 0)
    segment.sync_to(first, written.extend, lost.extend)
    write = os.write
    full = True

    def failing(fd: int, data: bytes | memoryview) -> int:
        if full:
            write(fd, bytes(data)[:5])  # a part of it, then no space
            raise OSError(errno.ENOSPC, "No space left on device")
        return write(fd, data)

    monkeypatch.setattr(wal.os, "write", failing)
    second = segment.write(record(1).encode(), 1)
    third = segment.write(record(2).encode(), 2)
    with pytest.raises(StoreError):
        segment.sync_to(second, written.extend, lost.extend)
    with pytest.raises(StoreError):
        segment.sync_to(third, written.extend, lost.extend)  # it went with the second
    full = False
    fourth = segment.write(record(3).encode(), 3)
    segment.sync_to(fourth, written.extend, lost.extend)
    monkeypatch.undo()
    segment.close()
    assert (written, lost) == ([0, 3], [1, 2])
    assert wal.read_segment(segment.path) == [record(0), record(3)]


def test_a_segment_whose_last_append_failed_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failed append's own sync raises; closing the segment after it does not."""
    segment: wal.SegmentFile[int] = wal.new_segment(tmp_path)
    segment.sync_to(segment.write(record(0).encode(), 0))

    def full(fd: int, data: bytes | memoryview) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(wal.os, "write", full)
    with pytest.raises(StoreError, match="No space left"):
        segment.sync_to(segment.write(record(1).encode(), 1))
    monkeypatch.undo()
    segment.close()
    assert wal.read_segment(segment.path) == [record(0)]


def _failing(errno_: int) -> Callable[..., int]:
    def fail(*_: object) -> int:
        raise OSError(errno_, os.strerror(errno_))

    return fail


def test_a_failed_write_that_cannot_be_cut_off_ends_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the failed write left stays when the cut fails, whole records of its failed
    appends among it: the reader must stop where it began, and an append after it could
    never be read back, so the file takes none."""
    segment: wal.SegmentFile[int] = wal.new_segment(tmp_path)
    segment.sync_to(segment.write(record(0).encode(), 0))
    write = os.write
    whole = len(record(1).encode())

    def partly(fd: int, data: bytes | memoryview) -> int:
        write(fd, bytes(data)[: whole + 5])  # record 1 whole, then a part of record 2
        raise OSError(errno.ENOSPC, "No space left on device")

    one, two = segment.write(record(1).encode(), 1), segment.write(record(2).encode(), 2)
    monkeypatch.setattr(wal.os, "write", partly)
    monkeypatch.setattr(wal.os, "ftruncate", _failing(errno.EIO))
    with pytest.raises(StoreError, match="No space left"):
        segment.sync_to(one)
    with pytest.raises(StoreError, match="No space left"):
        segment.sync_to(two)
    monkeypatch.undo()
    assert segment.broken
    with pytest.raises(StoreError, match="no more appends"):
        segment.sync_to(segment.write(record(3).encode(), 3))
    segment.close()
    assert wal.read_segment(segment.path) == [record(0)]


def test_no_append_is_acknowledged_from_a_file_whose_sync_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two appends written together whose sync failed: both fail, though a later sync
    succeeds (Linux reports a failed writeback once, and then syncs without it), and
    the file takes no more appends."""
    segment: wal.SegmentFile[int] = wal.new_segment(tmp_path)
    led, follower = segment.write(record(0).encode(), 0), segment.write(record(1).encode(), 1)
    monkeypatch.setattr(wal.os, "fdatasync", _failing(errno.EIO))
    with pytest.raises(StoreError, match="cannot sync"):
        segment.sync_to(led)
    monkeypatch.undo()
    with pytest.raises(StoreError, match="cannot sync"):
        segment.sync_to(follower)
    assert segment.broken
    with pytest.raises(StoreError, match="no more appends"):
        segment.sync_to(segment.write(record(2).encode(), 2))
    segment.close()


def test_a_sync_that_breaks_off_acknowledges_none_of_its_appends(tmp_path: Path) -> None:
    """Whatever stops a sync before its fdatasync (here its caller's own error), the
    appends it covered fail rather than return unsynced; and a second close does
    nothing (a descriptor's number may be another file's by then)."""
    segment: wal.SegmentFile[int] = wal.new_segment(tmp_path)
    led, follower = segment.write(record(0).encode(), 0), segment.write(record(1).encode(), 1)

    def refuse(_: list[int]) -> None:
        raise RuntimeError("the caller's own error")

    with pytest.raises(RuntimeError):
        segment.sync_to(led, refuse)
    with pytest.raises(StoreError):
        segment.sync_to(follower)
    assert segment.broken
    segment.close()
    segment.close()
