"""CORS for the ingestion paths: browsers send events with public keys, no cookies."""

from __future__ import annotations

from starlette.responses import Response

ALLOW_HEADERS = "x-api-key, x-service, x-namespace, x-dataset, content-type, content-encoding"

CORS_HEADERS = {"Access-Control-Allow-Origin": "*", "Vary": "Origin"}


def preflight() -> Response:
    return Response(
        status_code=204,
        headers={
            **CORS_HEADERS,
            "Access-Control-Allow-Methods": "POST, OPTIONS",
            "Access-Control-Allow-Headers": ALLOW_HEADERS,
            "Access-Control-Max-Age": "86400",
        },
    )
