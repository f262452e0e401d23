"""Reading a request body within the configured limits of size and time (gzip inflated
on the way)."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from starlette.requests import ClientDisconnect, Request

from limelight.errors import BadRequest, ClientClosedRequest, PayloadTooLarge, RequestTimeout
from limelight.ingest.body import BodyReader
from limelight.web.request import runtime_of


async def read_body(request: Request, limit: int) -> bytes:
    """The uncompressed body; 413 as soon as it passes ``limit``, reading no further, 408
    when it has not all arrived within the body read timeout, and 499 (recorded, never
    sent) when the client closed the connection before it had.

    Without a deadline a client that announces a body and stalls holds its
    connection, and whatever the handler holds, for as long as it likes. The 408
    closes the connection: the rest of the body is never read.
    """
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError as exc:
            raise BadRequest("invalid Content-Length") from exc
        if size > limit:
            raise PayloadTooLarge(f"the request body is over {limit} bytes")
    reader = BodyReader(limit, request.headers.get("content-encoding"))
    seconds = runtime_of(request).settings.body_read_timeout
    try:
        async with asyncio.timeout(seconds):
            async for chunk in request.stream():
                reader.feed(chunk)
    except TimeoutError:
        raise RequestTimeout(
            f"the request body did not arrive within {seconds:g} s",
            headers={"Connection": "close"},
        ) from None
    except ClientDisconnect:
        raise ClientClosedRequest("the client closed the connection during the body") from None
    return reader.finish()


async def read_json(request: Request, what: str) -> Any:
    """The JSON body (``{}`` when empty), within the request size limit; 400 naming
    ``what`` when it is not JSON."""
    body = await read_body(request, runtime_of(request).settings.max_request_bytes)
    try:
        return orjson.loads(body or b"{}")
    except orjson.JSONDecodeError:
        raise BadRequest(message=f"Invalid {what}", reason="the body is not valid JSON") from None
