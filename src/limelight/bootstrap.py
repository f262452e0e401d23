"""First-run set-up: a default workspace, environment and keys to start with."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from limelight.auth.api_keys import mint_key
from limelight.auth.key_owners import ADMIN_EMAIL
from limelight.auth.passwords import hash_password
from limelight.store.meta import accounts_repo, repos
from limelight.store.meta.accounts_models import User
from limelight.store.meta.models import ApiKey, Environment, Workspace, utcnow

DEFAULT_WORKSPACE = "default"
DEFAULT_ENVIRONMENT = "prod"
BOOTSTRAP_KEY_NAME = "bootstrap"


@dataclass
class BootstrapResult:
    workspace_id: str
    environment_id: str
    ingest_key: str
    admin_key: str | None  # None when it was created earlier: admin keys are shown once
    admin_key_display: str
    created: bool
    admin_email: str = ADMIN_EMAIL
    admin_password: str | None = None  # only when the admin user was just created


def _bootstrap_key(s: Session, env: Environment, kind: str) -> ApiKey | None:
    return s.scalar(
        select(ApiKey).where(
            ApiKey.environment_id == env.id,
            ApiKey.kind == kind,
            ApiKey.name == BOOTSTRAP_KEY_NAME,
            ApiKey.revoked_at.is_(None),
        )
    )


def ensure_default(s: Session, redact: bool = True) -> BootstrapResult:
    """Idempotent: creates only what is missing."""
    created = False
    ws = s.scalar(select(Workspace).where(Workspace.name == DEFAULT_WORKSPACE))
    if ws is None:
        ws = repos.create_workspace(s, DEFAULT_WORKSPACE)
        created = True
    env = s.scalar(
        select(Environment).where(
            Environment.workspace_id == ws.id, Environment.name == DEFAULT_ENVIRONMENT
        )
    )
    if env is None:
        env = repos.create_environment(s, ws, DEFAULT_ENVIRONMENT, redact)
        created = True
    ingest = _bootstrap_key(s, env, "ingest")
    if ingest is None:
        ingest_value = mint_key(s, env, "ingest", BOOTSTRAP_KEY_NAME).value
        created = True
    else:
        ingest_value = ingest.public_value or ""
    admin = _bootstrap_key(s, env, "admin")
    admin_value: str | None = None
    if admin is None:
        new_admin = mint_key(s, env, "admin", BOOTSTRAP_KEY_NAME)
        admin_value, admin_display = new_admin.value, new_admin.key.display
        created = True
    else:
        admin_display = admin.display
    user, password = _ensure_admin_user(s, ws)
    # The bootstrap keys act for the admin user (the author of what they create).
    for key in repos.list_keys(s, env):
        if key.name == BOOTSTRAP_KEY_NAME and key.user_id is None:
            key.user_id = user.id
    created = created or password is not None
    return BootstrapResult(
        ws.id, env.id, ingest_value, admin_value, admin_display, created, user.email, password
    )


def _ensure_admin_user(s: Session, ws: Workspace) -> tuple[User, str | None]:
    """The admin user, a member of the default workspace; the password when just made."""
    user = accounts_repo.user_by_email(s, ADMIN_EMAIL)
    password = None
    if user is None:
        password = secrets.token_urlsafe(18)
        user = accounts_repo.create_user(s, ADMIN_EMAIL, hash_password(password), utcnow())
    accounts_repo.add_member(s, user, ws, utcnow())
    return user, password
