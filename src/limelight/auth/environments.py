"""The environments a console user reaches through their workspaces, and what a member
changes in them.

Membership is the whole right: an environment of a workspace the user is not a member
of is unknown to them (``NotFound``), exactly like one that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from limelight.errors import NotFound
from limelight.store.meta import accounts_repo as accounts
from limelight.store.meta import oauth_repo, repos
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant


@dataclass(frozen=True)
class EnvChoice:
    workspace_id: str
    workspace_name: str
    environment_id: str
    environment_name: str
    redact_secrets: bool

    @property
    def tenant(self) -> Tenant:
        return Tenant(self.workspace_id, self.environment_id)


def environments_of(db: MetaDB, user_id: str) -> list[EnvChoice]:
    """Every environment of the user's workspaces."""
    with db.session() as s:
        return [
            EnvChoice(ws.id, ws.name, env.id, env.name, env.redact_secrets)
            for ws, env in accounts.environments_of(s, user_id)
        ]


@dataclass
class EnvView:
    environment: Any
    keys: list[Any]


@dataclass
class WorkspaceView:
    workspace: Any
    environments: list[EnvView]


def overview(db: MetaDB, user_id: str) -> dict[str, Any]:
    """The user's workspaces with their environments and live ingest keys, and the
    integrations the user installed (``workspaces``, ``installations``)."""
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


def create_environment(db: MetaDB, user_id: str, workspace_id: str, name: str, redact: bool) -> str:
    """A new environment of a workspace the user is a member of; its id."""
    with db.session(immediate=True) as s:
        if not accounts.is_member(s, user_id, workspace_id):
            raise NotFound()
        workspace = repos.find_workspace(s, workspace_id)
        return repos.create_environment(s, workspace, name, redact).id


def set_redaction(db: MetaDB, environment_id: str, on: bool) -> None:
    """Whether the environment's ingest redacts secret-looking keys."""
    with db.session(immediate=True) as s:
        repos.find_environment(s, environment_id).redact_secrets = on
