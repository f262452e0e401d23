"""API-key authentication of the API routers, and the ingest limits of a request."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from limelight.auth.api_keys import KeyContext
from limelight.errors import Forbidden
from limelight.ingest.batch import IngestLimits
from limelight.runtime import Runtime
from limelight.web.access import note_tenant
from limelight.web.request import runtime_of


def key_from_headers(request: Request) -> str | None:
    """The API key from ``Authorization`` (bare or ``Bearer``) or ``x-api-key``."""
    auth = request.headers.get("authorization")
    if auth:
        auth = auth.strip()
        scheme, _, rest = auth.partition(" ")
        return rest.strip() if scheme.lower() == "bearer" and rest else auth
    return request.headers.get("x-api-key")


async def api_key(request: Request, value: str | None = None) -> KeyContext:
    """Any valid API key (ingest or admin), else 401 saying why (``resolve_api_key``);
    a key resolved since the metadata database last changed without reading it."""
    if value is None:
        value = key_from_headers(request)
    keys = runtime_of(request).keys
    ctx = keys.known(value)
    if ctx is None:
        ctx = await run_in_threadpool(keys.resolve, value)
    note_tenant(request, ctx.tenant)
    return ctx


async def admin_key(request: Request) -> KeyContext:
    """An admin key: 401 when missing or unknown, 403 for a public ingest key."""
    ctx = await api_key(request)
    if not ctx.is_admin:
        raise Forbidden("this endpoint needs an admin key; public ingest keys can only send events")
    return ctx


def ingest_limits(runtime: Runtime) -> IngestLimits:
    settings = runtime.settings
    return IngestLimits(
        max_event_bytes=settings.max_event_bytes,
        max_events=settings.max_events_per_request,
        max_stored_bytes=settings.max_stored_bytes_per_request,
        past_days=runtime.past_days,
    )
