"""An environment's API keys and settings: create and revoke keys, turn redaction on and off.

An admin key is shown once, on the keys page the creating form redirects to
(``auth/shown_once.py``): only its SHA-256 is kept. Ingest keys are public by
design and stay readable. Keys made for an integration's installation go with
the installation (uninstall it on the home page).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.auth.api_keys import KEY_KINDS, mint_key
from limelight.console.render import render, see_other
from limelight.console.route import console_router
from limelight.console.scope import Here, Place
from limelight.console.session import check_csrf, form_fields, show_once, shown_once
from limelight.errors import BadRequest, NotFound
from limelight.store.meta import repos
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import ApiKey
from limelight.web.request import runtime_of

router = console_router()
MAX_NAME = 128


@dataclass(frozen=True)
class KeyRow:
    id: str
    kind: str
    name: str
    shown: str  # the whole ingest key, or an admin key's prefix and last characters
    created_at: datetime
    revoked_at: datetime | None
    for_integration: bool


def _row(key: ApiKey) -> KeyRow:
    return KeyRow(
        id=key.id,
        kind=key.kind,
        name=key.name,
        shown=key.public_value or key.display,
        created_at=key.created_at,
        revoked_at=key.revoked_at,
        for_integration=key.installation_id is not None,
    )


def key_rows(db: MetaDB, environment_id: str) -> list[KeyRow]:
    with db.session() as s:
        env = repos.find_environment(s, environment_id)
        return [_row(k) for k in repos.list_keys(s, env)]


def ingest_key_for(db: MetaDB, environment_id: str) -> str | None:
    """An ingest key of the environment to show in examples (not an integration's)."""
    with db.session() as s:
        env = repos.find_environment(s, environment_id)
        for key in repos.list_keys(s, env):
            if key.kind == "ingest" and key.revoked_at is None and not key.installation_id:
                return key.public_value
    return None


def _create(db: MetaDB, here: Place, kind: str, name: str) -> str:
    with db.session(immediate=True) as s:
        env = repos.find_environment(s, here.env.environment_id)
        return mint_key(s, env, kind, name, user_id=here.user.user_id).value


def _revoke(db: MetaDB, environment_id: str, key_id: str) -> None:
    with db.session(immediate=True) as s:
        key = s.get(ApiKey, key_id)
        if key is None or key.environment_id != environment_id:
            raise NotFound()
        if key.installation_id:
            raise BadRequest("this key belongs to an installed integration: uninstall it instead")
        repos.revoke_key(s, key_id)


def _set_redaction(db: MetaDB, environment_id: str, on: bool) -> None:
    with db.session(immediate=True) as s:
        repos.find_environment(s, environment_id).redact_secrets = on


@router.get("/env/{environment_id}/keys")
async def keys_page(request: Request, here: Here) -> Response:
    """The keys, and the keys this session's forms just made (shown this once)."""
    rt = runtime_of(request)
    new_keys = [kept["key"] for kept in await shown_once(request, f"{here.base}/keys")]
    rows = await run_in_threadpool(key_rows, rt.meta, here.env.environment_id)
    return render(
        "keys.html",
        here=here,
        section="keys",
        keys=rows,
        new_keys=new_keys,
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
    value = await run_in_threadpool(_create, runtime_of(request).meta, here, kind, name)
    page = f"{here.base}/keys"
    await show_once(request, page, {"key": value})
    return see_other(page)


@router.post("/env/{environment_id}/keys/{key_id}/revoke")
async def revoke_key(request: Request, here: Here, key_id: str) -> Response:
    check_csrf(request, here.user, await form_fields(request))
    await run_in_threadpool(_revoke, runtime_of(request).meta, here.env.environment_id, key_id)
    return see_other(f"{here.base}/keys")


@router.post("/env/{environment_id}/redaction")
async def redaction(request: Request, here: Here) -> Response:
    form = await form_fields(request)
    check_csrf(request, here.user, form)
    on = form.get("redact") == "on"
    await run_in_threadpool(_set_redaction, runtime_of(request).meta, here.env.environment_id, on)
    return see_other(f"{here.base}/keys")
