"""The first page after login: the user's workspaces and environments, ingest keys,
installed integrations (and uninstalling them), and new environments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from limelight.auth.sessions import SessionUser
from limelight.console.render import render, see_other
from limelight.console.route import console_router
from limelight.console.session import check_csrf, form_fields, sessions_of, signed_in
from limelight.errors import BadRequest, NotFound
from limelight.store.meta import accounts_repo as accounts
from limelight.store.meta import oauth_repo, repos
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow
from limelight.web.request import runtime_of

router = console_router()
User = Annotated[SessionUser, Depends(signed_in)]


@dataclass
class EnvView:
    environment: Any
    keys: list[Any]


@dataclass
class WorkspaceView:
    workspace: Any
    environments: list[EnvView]


def overview(db: MetaDB, user_id: str) -> dict[str, Any]:
    with db.session() as s:
        workspaces = []
        for ws in accounts.workspaces_of(s, user_id):
            envs = []
            for env in repos.list_environments(s, ws):
                keys = [
                    k
                    for k in repos.list_keys(s, env)
                    if k.kind == "ingest" and k.revoked_at is None
                ]
                envs.append(EnvView(env, keys))
            workspaces.append(WorkspaceView(ws, envs))
        installations = [
            {
                "id": inst.id,
                "integration": integration.name,
                "workspace": ws.name,
                "environments": [
                    g.environment_name for g in oauth_repo.granted_environments(s, inst.id)
                ],
            }
            for inst, integration, ws, _ in oauth_repo.active_installations(s, user_id=user_id)
        ]
    return {"workspaces": workspaces, "installations": installations}


@router.get("/")
async def home(request: Request, user: User) -> Response:
    data = await run_in_threadpool(overview, runtime_of(request).meta, user.user_id)
    csrf = sessions_of(request).csrf_token(user.binding)
    return render("home.html", user=user, csrf=csrf, **data)


@router.get("/env/{environment_id}")
async def environment_root(environment_id: str) -> Response:
    return see_other(f"/env/{environment_id}/events")


def _uninstall(db: MetaDB, user_id: str, installation_id: str) -> None:
    with db.session(immediate=True) as s:
        mine = oauth_repo.active_installations(s, user_id=user_id)
        if not any(inst.id == installation_id for inst, *_ in mine):
            raise NotFound()
        oauth_repo.revoke_installation(s, installation_id, utcnow())


@router.post("/installations/{installation_id}/uninstall")
async def uninstall(request: Request, user: User, installation_id: str) -> Response:
    check_csrf(request, user, await form_fields(request))
    await run_in_threadpool(_uninstall, runtime_of(request).meta, user.user_id, installation_id)
    return see_other("/")


def _create_environment(
    db: MetaDB, user_id: str, workspace_id: str, name: str, redact: bool
) -> str:
    with db.session(immediate=True) as s:
        if not accounts.is_member(s, user_id, workspace_id):
            raise NotFound()
        workspace = repos.find_workspace(s, workspace_id)
        return repos.create_environment(s, workspace, name, redact).id


@router.post("/workspaces/{workspace_id}/environments")
async def create_environment(request: Request, user: User, workspace_id: str) -> Response:
    form = await form_fields(request)
    check_csrf(request, user, form)
    name = form.get("name", "").strip()
    if not 1 <= len(name) <= 128:
        raise BadRequest("an environment needs a name of 1 to 128 characters")
    env_id = await run_in_threadpool(
        _create_environment,
        runtime_of(request).meta,
        user.user_id,
        workspace_id,
        name,
        form.get("redact") == "on",
    )
    return see_other(f"/env/{env_id}/keys")
