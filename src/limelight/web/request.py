"""A request's runtime and its client's address; the methods of catch-all routes."""

from __future__ import annotations

from starlette.requests import Request

from limelight.runtime import Runtime

# A catch-all route takes every method so that a wrong one is answered by the
# endpoint (405 with Allow, in the endpoint's own error format), not by the router.
EVERY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def runtime_of(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


def client_ip(request: Request) -> str:
    """The client's address, as the failed-authentication limits count it.

    The peer's address, unless the peer is a proxy named in
    ``LIMELIGHT_TRUSTED_PROXIES``: then the server (uvicorn's proxy-headers
    middleware, turned on only for those) has put X-Forwarded-For's client in
    its place. A header is never read here, so no client can choose its address.
    """
    return request.client.host if request.client else "unknown"
