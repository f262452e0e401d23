"""First-run set-up: a default workspace, environment and keys to start with."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from limelight.store.meta import repos
from limelight.store.meta.models import ApiKey, Environment, Workspace

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
        ingest_value = repos.create_key(s, env, "ingest", BOOTSTRAP_KEY_NAME).value
        created = True
    else:
        ingest_value = ingest.public_value or ""
    admin = _bootstrap_key(s, env, "admin")
    admin_value: str | None = None
    if admin is None:
        new_admin = repos.create_key(s, env, "admin", BOOTSTRAP_KEY_NAME)
        admin_value, admin_display = new_admin.value, new_admin.key.display
        created = True
    else:
        admin_display = admin.display
    return BootstrapResult(ws.id, env.id, ingest_value, admin_value, admin_display, created)
