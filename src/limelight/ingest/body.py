"""Reading a request body within the size limit, inflating gzip on the way.

The limit applies to the uncompressed bytes, and inflation stops as soon as it
is passed, so a small gzip bomb costs at most ``limit`` bytes of memory.
"""

from __future__ import annotations

import zlib

from limelight.errors import BadRequest, PayloadTooLarge

_ENCODINGS = {"", "identity", "gzip", "x-gzip", "deflate"}


class BodyReader:
    """Feed chunks as they arrive; ``finish`` returns the whole uncompressed body."""

    def __init__(self, limit: int, content_encoding: str | None) -> None:
        encoding = (content_encoding or "").strip().lower()
        if encoding not in _ENCODINGS:
            raise BadRequest(f"unsupported Content-Encoding {encoding!r}; use gzip or none")
        self._limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        # wbits 32+15: accept a gzip or a zlib header, whichever the body has.
        self._inflater = zlib.decompressobj(32 + 15) if encoding not in ("", "identity") else None
        self._compressed = 0

    def _append(self, data: bytes) -> None:
        self._size += len(data)
        if self._size > self._limit:
            raise PayloadTooLarge(f"the request body is over {self._limit} bytes uncompressed")
        if data:
            self._parts.append(data)

    def feed(self, chunk: bytes) -> None:
        if self._inflater is None:
            self._append(chunk)
            return
        self._compressed += len(chunk)
        if self._compressed > self._limit:
            raise PayloadTooLarge(f"the request body is over {self._limit} bytes")
        data = chunk
        try:
            while data:
                if self._inflater.eof:
                    # Concatenated gzip members form one valid gzip stream (RFC 1952).
                    self._inflater = zlib.decompressobj(32 + 15)
                # At most limit+1 bytes out per call: enough to know the limit is passed.
                out = self._inflater.decompress(data, self._limit - self._size + 1)
                self._append(out)
                data = self._inflater.unconsumed_tail or self._inflater.unused_data
        except zlib.error as exc:
            raise BadRequest("the body is not valid gzip") from exc

    def finish(self) -> bytes:
        if self._inflater is not None:
            try:
                self._append(self._inflater.flush())
            except zlib.error as exc:
                raise BadRequest("the body is not valid gzip") from exc
            if not self._inflater.eof and self._compressed:
                raise BadRequest("the gzip body is truncated")
        return b"".join(self._parts)
