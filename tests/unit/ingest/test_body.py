"""Reading request bodies: the 6MB limit on uncompressed bytes, gzip, bombs, truncation."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib

import pytest

from limelight.errors import BadRequest, PayloadTooLarge
from limelight.ingest.body import BodyReader

LIMIT = 1024 * 1024


def read(data: bytes, encoding: str | None = None, chunk: int = 65536, limit: int = LIMIT) -> bytes:
    reader = BodyReader(limit, encoding)
    for i in range(0, len(data), chunk):
        reader.feed(data[i : i + chunk])
    return reader.finish()


def test_plain_body_is_returned_whole_from_chunks() -> None:
    data = b"[" + b",".join(b'{"n":%d}' % i for i in range(20_000)) + b"]"
    assert read(data, None, chunk=1000) == data
    assert read(data, "identity") == data


def test_plain_body_at_the_limit_is_read_and_one_byte_more_is_refused() -> None:
    assert len(read(b"x" * LIMIT)) == LIMIT
    with pytest.raises(PayloadTooLarge):
        read(b"x" * (LIMIT + 1))


@pytest.mark.parametrize("encoding", ["gzip", "GZIP", " x-gzip "])
def test_gzip_is_inflated(encoding: str) -> None:
    data = b'[{"message": "hello"}]' * 1000
    assert read(gzip.compress(data), encoding, chunk=100) == data


def test_deflate_is_inflated() -> None:
    data = b'[{"message": "hello"}]'
    assert read(zlib.compress(data), "deflate") == data


@pytest.mark.parametrize("chunk", [1, 3, 65536])
def test_raw_deflate_without_the_zlib_header_is_inflated(chunk: int) -> None:
    """What many clients send as "deflate" (RFC 1951 alone, as browsers accept it)."""
    data = b'[{"message": "hello"}]' * 50
    raw = zlib.compressobj(wbits=-15)
    body = raw.compress(data) + raw.flush()
    assert read(body, "deflate", chunk=chunk) == data
    assert read(zlib.compress(data), "deflate", chunk=chunk) == data


@pytest.mark.parametrize("chunk", [1, 65536])
def test_a_gzip_body_labelled_deflate_is_inflated(chunk: int) -> None:
    """Some clients send gzip as "deflate"; a raw deflate stream never starts as gzip."""
    data = b'[{"message": "hello"}]' * 50
    assert read(gzip.compress(data), "deflate", chunk=chunk) == data


def test_a_deflate_body_that_is_not_deflate_is_a_bad_request() -> None:
    with pytest.raises(BadRequest, match="not valid deflate"):
        read(b"\xff\xff\xff\xff not deflate", "deflate")


@pytest.mark.parametrize("chunk", [1, 7, 65536])
def test_zero_bytes_after_a_gzip_member_are_padding(chunk: int) -> None:
    """As gzip(1) reads them: tape and block writers pad the stream with zeros."""
    data = b'[{"a": 1}]'
    assert read(gzip.compress(data) + b"\0" * 512, "gzip", chunk=chunk) == data
    with pytest.raises(BadRequest, match="not valid gzip"):
        read(gzip.compress(data) + b"\0" * 16 + b"junk", "gzip", chunk=chunk)


def test_concatenated_gzip_members_are_one_body() -> None:
    data = gzip.compress(b'[{"a": 1},') + gzip.compress(b'{"b": 2}]')
    assert read(data, "gzip", chunk=7) == b'[{"a": 1},{"b": 2}]'


def test_gzip_that_inflates_past_the_limit_is_refused_without_inflating_it_all() -> None:
    bomb = gzip.compress(b"\0" * (64 * LIMIT), compresslevel=9)  # 64MB from ~64kb
    assert len(bomb) < LIMIT
    tracemalloc.start()
    try:
        with pytest.raises(PayloadTooLarge):
            read(bomb, "gzip")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * LIMIT


def test_gzip_inflating_to_exactly_the_limit_is_accepted() -> None:
    data = b"y" * LIMIT
    assert read(gzip.compress(data), "gzip") == data


def test_compressed_bytes_over_the_limit_are_refused_early() -> None:
    import os

    incompressible = gzip.compress(os.urandom(LIMIT + 100))
    with pytest.raises(PayloadTooLarge):
        read(incompressible, "gzip")


def test_truncated_gzip_is_a_bad_request() -> None:
    data = gzip.compress(b'[{"message": "hello"}]' * 100)
    with pytest.raises(BadRequest, match="truncated"):
        read(data[: len(data) // 2], "gzip")


def test_a_body_that_is_not_gzip_is_a_bad_request() -> None:
    with pytest.raises(BadRequest, match="not valid gzip"):
        read(b'[{"message": "plain"}]', "gzip")


def test_an_empty_gzip_body_reads_as_empty() -> None:
    assert read(b"", "gzip") == b""


def test_an_unknown_encoding_is_a_bad_request() -> None:
    with pytest.raises(BadRequest, match="Content-Encoding"):
        BodyReader(LIMIT, "br")
