"""What a request tells its access-log line beyond what the middleware sees itself
(``api/observe.py``): whose tenant it served, and why it was refused.

Both are noted in the request's ASGI scope, which the middleware shares with the
route. The tenant is noted once a key or a console session is known to belong to
it (never for a stranger's 404); the reason where an error becomes a response. A
reason is one short sentence for people: cut to ``MAX_REASON`` characters, on one
line, and any value shaped like one of our secrets (``ll_sk_...``) cut to its prefix,
so that even a message that quoted what a client sent cannot put a key in the log.
"""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.types import Scope

from limelight.errors import ExposedError
from limelight.tenant import Tenant

TENANT_KEY = "limelight.tenant"
REASON_KEY = "limelight.reason"
MAX_REASON = 160
# Every secret we make is "ll_" and a two-letter kind (auth/secrets.py), then 43 characters.
_SECRET = re.compile(r"\b(ll_[a-z]{2}_)[A-Za-z0-9_-]+")
_SPACE = re.compile(r"\s+")


def note_tenant(request: Request, tenant: Tenant) -> None:
    """Record whose key or environment the request served, for its access-log line."""
    request.scope[TENANT_KEY] = tenant


def tenant_of(scope: Scope) -> Tenant | None:
    tenant = scope.get(TENANT_KEY)
    return tenant if isinstance(tenant, Tenant) else None


def note_reason(request: Request, text: str) -> None:
    """Record why the request was refused, for its access-log line (see ``reason_text``)."""
    request.scope[REASON_KEY] = reason_text(text)


def note_error(request: Request, exc: ExposedError) -> None:
    """The error's sentence, and the fields it names (not what it says of their values:
    a message may quote what was sent)."""
    fields = [e["field"] for e in exc.errors or [] if isinstance(e, dict) and "field" in e]
    named = f" ({', '.join(map(str, fields[:3]))}{', ...' if len(fields) > 3 else ''})"
    note_reason(request, (exc.reason or exc.message) + (named if fields else ""))


def reason_of(scope: Scope) -> str | None:
    reason = scope.get(REASON_KEY)
    return reason if isinstance(reason, str) else None


def reason_text(text: str) -> str:
    """``text`` as the log shows it: no secret, one line, at most ``MAX_REASON`` characters."""
    text = _SPACE.sub(" ", _SECRET.sub(r"\1…", text)).strip()
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"
