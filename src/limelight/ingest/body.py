"""Reading a request body within the size limit, inflating gzip or deflate on the way.

The limit applies to the uncompressed bytes, and inflation stops as soon as it
is passed, so a small gzip bomb costs at most ``limit`` bytes of memory.
"""

from __future__ import annotations

import zlib

from limelight.errors import BadRequest, PayloadTooLarge

_ENCODINGS = {"", "identity", "gzip", "x-gzip", "deflate"}


# zlib's window bits: a gzip or a zlib header, whichever the body has; no header at all.
_GZIP_OR_ZLIB = 32 + 15
_RAW_DEFLATE = -15


def _wrapped(first: bytes) -> bool:
    """A zlib (RFC 1950) or gzip (RFC 1952) stream, not raw deflate (RFC 1951, what many
    clients send as "deflate"). zlib's two header bytes: deflate with a window of at
    most 32 KiB, and a check that makes the pair a multiple of 31; a raw stream starts
    with a block header that rarely passes both. gzip's magic 1f 8b, which some clients
    send labelled deflate (as the code before read it): a raw stream never starts with
    1f, a block of the reserved type 3."""
    zlib_header = (
        first[0] & 0x0F == 8 and first[0] >> 4 <= 7 and (first[0] << 8 | first[1]) % 31 == 0
    )
    return zlib_header or first[:2] == b"\x1f\x8b"


class BodyReader:
    """Feed chunks as they arrive; ``finish`` returns the whole uncompressed body."""

    def __init__(self, limit: int, content_encoding: str | None) -> None:
        encoding = (content_encoding or "").strip().lower()
        if encoding not in _ENCODINGS:
            raise BadRequest(f"unsupported Content-Encoding {encoding!r}; use gzip or none")
        self._limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        deflate = encoding == "deflate"
        self._compressed_form = "deflate" if deflate else "gzip"
        self._inflating = encoding not in ("", "identity")
        # "deflate" waits for its first two bytes to tell zlib from raw deflate.
        self._inflater = None if deflate or not self._inflating else self._new_inflater()
        self._head = b""
        self._compressed = 0
        self._padding = False  # zero bytes after the last gzip member (gzip(1) skips them)

    def _new_inflater(self, wbits: int = _GZIP_OR_ZLIB) -> zlib._Decompress:
        return zlib.decompressobj(wbits)

    def _invalid(self) -> BadRequest:
        return BadRequest(f"the body is not valid {self._compressed_form}")

    def _append(self, data: bytes) -> None:
        self._size += len(data)
        if self._size > self._limit:
            raise PayloadTooLarge(f"the request body is over {self._limit} bytes uncompressed")
        if data:
            self._parts.append(data)

    def feed(self, chunk: bytes) -> None:
        if not self._inflating:
            self._append(chunk)
            return
        self._compressed += len(chunk)
        if self._compressed > self._limit:
            raise PayloadTooLarge(f"the request body is over {self._limit} bytes")
        data = chunk
        if self._inflater is None:  # deflate: which form, once two bytes are here
            data, self._head = self._head + data, b""
            if len(data) < 2:
                self._head = data
                return
            self._inflater = self._new_inflater(_GZIP_OR_ZLIB if _wrapped(data) else _RAW_DEFLATE)
        self._inflate(data)

    def _inflate(self, data: bytes) -> None:
        assert self._inflater is not None
        try:
            while data:
                if self._padding or (self._inflater.eof and not data.strip(b"\0")):
                    if data.strip(b"\0"):
                        raise self._invalid()
                    self._padding = True
                    return
                if self._inflater.eof:
                    # Concatenated gzip members form one valid gzip stream (RFC 1952).
                    self._inflater = self._new_inflater()
                # At most limit+1 bytes out per call: enough to know the limit is passed.
                out = self._inflater.decompress(data, self._limit - self._size + 1)
                self._append(out)
                data = self._inflater.unconsumed_tail or self._inflater.unused_data
        except zlib.error as exc:
            raise self._invalid() from exc

    def finish(self) -> bytes:
        if self._head:  # one byte of deflate: never a whole stream
            raise self._invalid()
        if self._inflater is not None:
            try:
                self._append(self._inflater.flush())
            except zlib.error as exc:
                raise self._invalid() from exc
            if not self._inflater.eof and self._compressed:
                raise BadRequest(f"the {self._compressed_form} body is truncated")
        return b"".join(self._parts)
