"""Reading a request body within the configured limit (gzip inflated on the way)."""

from __future__ import annotations

from starlette.requests import Request

from limelight.errors import BadRequest, PayloadTooLarge
from limelight.ingest.body import BodyReader


async def read_body(request: Request, limit: int) -> bytes:
    """The uncompressed body; 413 as soon as it passes ``limit``, reading no further."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError as exc:
            raise BadRequest("invalid Content-Length") from exc
        if size > limit:
            raise PayloadTooLarge(f"the request body is over {limit} bytes")
    reader = BodyReader(limit, request.headers.get("content-encoding"))
    async for chunk in request.stream():
        reader.feed(chunk)
    return reader.finish()
