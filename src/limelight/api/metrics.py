"""``GET /metrics``: Prometheus' format, for the addresses ``LIMELIGHT_METRICS_ALLOW``
names (loopback by default); any other client gets the 404 of an unknown path."""

from __future__ import annotations

import ipaddress

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from limelight.api.openapi import Operation
from limelight.errors import NotFound
from limelight.metrics import exposition
from limelight.settings import parse_networks
from limelight.web.request import client_ip, runtime_of

METRICS_PATH = "/metrics"
# A Starlette route, which FastAPI does not document: its operation, for ``openapi_document``.
OPERATIONS: dict[tuple[str, str], Operation] = {
    (METRICS_PATH, "get"): {
        "tags": ["operations"],
        "summary": "Prometheus metrics",
        "description": "Prometheus' text format, for the clients `LIMELIGHT_METRICS_ALLOW` "
        "names (loopback by default); anyone else gets a 404.",
        "responses": {
            "200": {"description": "The metrics.", "content": {"text/plain": {}}},
            "404": {"description": "Not a client allowed to read metrics."},
        },
    },
}


def _allowed(request: Request) -> bool:
    try:
        address = ipaddress.ip_address(client_ip(request))
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # an IPv4 client of a dual-stack listener
    networks = parse_networks(runtime_of(request).settings.metrics_allow)
    return any(address in network for network in networks)


async def metrics_endpoint(request: Request) -> Response:
    if not _allowed(request):
        raise NotFound()
    # In a worker thread: reading the stores' sizes walks a directory or asks a server.
    body, content_type = await run_in_threadpool(exposition, runtime_of(request).store_sizes)
    return Response(body, media_type=content_type)


def metrics_route() -> Route:
    return Route(METRICS_PATH, metrics_endpoint, methods=["GET"], include_in_schema=False)
