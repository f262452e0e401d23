"""CORS for the ingestion paths: browsers send events with public keys, no cookies."""

from __future__ import annotations

from starlette.responses import Response

ALLOW_HEADERS = "x-api-key, x-service, x-namespace, x-dataset, content-type, content-encoding"

CORS_HEADERS = {"Access-Control-Allow-Origin": "*", "Vary": "Origin"}


def preflight(*extra_headers: str) -> Response:
    """The answer to a browser's OPTIONS: any origin may POST with these headers."""
    return Response(
        status_code=204,
        headers={
            **CORS_HEADERS,
            "Access-Control-Allow-Methods": "POST, OPTIONS",
            "Access-Control-Allow-Headers": ", ".join((ALLOW_HEADERS, *extra_headers)),
            "Access-Control-Max-Age": "86400",
        },
    )
