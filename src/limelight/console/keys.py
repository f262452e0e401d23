"""An environment's API keys and settings: create and revoke keys, turn redaction on and off.

An admin key is shown once, on the keys page the creating form redirects to
(``auth/shown_once.py``): only its SHA-256 is kept. Ingest keys are public by
design and stay readable. Keys made for an integration's installation go with
the installation (uninstall it on the home page).
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.auth.api_keys import KEY_KINDS
from limelight.auth.environment_keys import create_key as new_key
from limelight.auth.environment_keys import key_rows
from limelight.auth.environment_keys import revoke_key as revoke
from limelight.auth.environments import set_redaction
from limelight.console.render import render, see_other
from limelight.console.route import console_router
from limelight.console.scope import Here
from limelight.console.session import (
    check_csrf,
    form_fields,
    is_refusal,
    refusals,
    refused,
    show_once,
    shown_once,
)
from limelight.errors import BadRequest, ExposedError
from limelight.web.request import runtime_of

router = console_router()
MAX_NAME = 128


@router.get("/env/{environment_id}/keys")
async def keys_page(request: Request, here: Here) -> Response:
    """The keys, and the keys this session's forms just made or why one was refused
    (shown this once)."""
    rt = runtime_of(request)
    kept = await shown_once(request, f"{here.base}/keys")
    new_keys = [k["key"] for k in kept if "key" in k]
    rows = await run_in_threadpool(key_rows, rt.meta, here.env.environment_id)
    return render(
        "keys.html",
        here=here,
        section="keys",
        keys=rows,
        new_keys=new_keys,
        errors=refusals(kept),
        events_url=rt.settings.events_url,
    )


@router.post("/env/{environment_id}/keys")
async def create_key(request: Request, here: Here) -> Response:
    """To the keys page, which shows the new key this once (an admin key never again)."""
    form = await form_fields(request)
    check_csrf(request, here.user, form)
    kind = form.get("kind", "")
    if kind not in KEY_KINDS:
        raise BadRequest("choose the kind of key: ingest or admin")
    name = form.get("name", "").strip()[:MAX_NAME]
    meta, env_id = runtime_of(request).meta, here.env.environment_id
    value = await run_in_threadpool(new_key, meta, env_id, kind, name, here.user.user_id)
    page = f"{here.base}/keys"
    await show_once(request, page, {"key": value})
    return see_other(page)


@router.post("/env/{environment_id}/keys/{key_id}/revoke")
async def revoke_key(request: Request, here: Here, key_id: str) -> Response:
    check_csrf(request, here.user, await form_fields(request))
    page = f"{here.base}/keys"
    try:
        await run_in_threadpool(revoke, runtime_of(request).meta, here.env.environment_id, key_id)
    except ExposedError as exc:
        if not is_refusal(exc):
            raise
        # An integration's key (it goes with its installation): back to the list, saying so.
        return await refused(request, page, exc)
    return see_other(page)


@router.post("/env/{environment_id}/redaction")
async def redaction(request: Request, here: Here) -> Response:
    form = await form_fields(request)
    check_csrf(request, here.user, form)
    on = form.get("redact") == "on"
    await run_in_threadpool(set_redaction, runtime_of(request).meta, here.env.environment_id, on)
    return see_other(f"{here.base}/keys")
