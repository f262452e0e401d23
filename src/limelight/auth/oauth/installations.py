"""Installing an integration: the rights checked again, one public ingest key per
environment granted, the authorization code tied to the installation."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from limelight.auth.api_keys import mint_key
from limelight.errors import NotFound
from limelight.store.meta import oauth_repo as repo
from limelight.store.meta.accounts_models import Installation
from limelight.store.meta.accounts_repo import is_member
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import Environment
from limelight.store.meta.oauth_repo import CodeGrant


def install(s: Session, grant: CodeGrant, key_name: str, now: datetime) -> Installation | None:
    """An installation with one new public ingest key per granted environment.

    Rights are checked again here, not only on the consent page: the user may
    have lost the workspace, or an environment may be gone, since the code was
    issued. None when nothing grantable is left.
    """
    if not is_member(s, grant.user_id, grant.workspace_id):
        return None
    envs = [
        env
        for env in (s.get(Environment, env_id) for env_id in grant.environment_ids)
        if env is not None and env.workspace_id == grant.workspace_id
    ]
    if not envs:
        return None
    installation = repo.add_installation(s, grant, now)
    for env in envs:
        key = mint_key(
            s, env, "ingest", key_name, user_id=grant.user_id, installation_id=installation.id
        ).key
        repo.link_key(s, installation.id, env.id, key.id)
    repo.mark_code_used(s, grant.code_id, installation.id)
    return installation


def uninstall(db: MetaDB, user_id: str, installation_id: str, now: datetime) -> None:
    """Revoke one of the user's own installations (with its keys and tokens); another
    user's, or one already gone, is ``NotFound``."""
    with db.session(immediate=True) as s:
        mine = repo.active_installations(s, user_id=user_id)
        if not any(inst.id == installation_id for inst, *_ in mine):
            raise NotFound()
        repo.revoke_installation(s, installation_id, now)
