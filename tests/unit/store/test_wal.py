"""The write-ahead log's segments on disk: records read back as written, a torn or
corrupt tail cut off (it was never acknowledged), names in the order they were made."""

from __future__ import annotations

from pathlib import Path

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
