"""Queries over the core metadata tables. Sessions come from ``MetaDB.session``."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, bindparam, select
from sqlalchemy.orm import Session

from limelight.errors import Conflict, NotFound
from limelight.ids import new_id
from limelight.store.meta.models import ApiKey, Environment, Workspace, utcnow


def create_workspace(s: Session, name: str) -> Workspace:
    if s.scalar(select(Workspace).where(Workspace.name == name)):
        raise Conflict(f"a workspace named {name!r} exists")
    ws = Workspace(id=new_id(), name=name, created_at=utcnow())
    s.add(ws)
    s.flush()
    return ws


def find_workspace(s: Session, ref: str) -> Workspace:
    """By id or by name."""
    ws = s.get(Workspace, ref) or s.scalar(select(Workspace).where(Workspace.name == ref))
    if ws is None:
        raise NotFound(f"no workspace {ref!r}")
    return ws


def list_workspaces(s: Session) -> list[Workspace]:
    return list(s.scalars(select(Workspace).order_by(Workspace.created_at)))


def create_environment(s: Session, workspace: Workspace, name: str, redact: bool) -> Environment:
    exists = s.scalar(
        select(Environment).where(
            Environment.workspace_id == workspace.id, Environment.name == name
        )
    )
    if exists:
        raise Conflict(f"workspace {workspace.name!r} has an environment named {name!r}")
    env = Environment(
        id=new_id(),
        workspace_id=workspace.id,
        name=name,
        redact_secrets=redact,
        created_at=utcnow(),
    )
    s.add(env)
    s.flush()
    return env


def find_environment(s: Session, ref: str, workspace: Workspace | None = None) -> Environment:
    """By id, or by name within ``workspace``."""
    env = s.get(Environment, ref)
    if env is None and workspace is not None:
        env = s.scalar(
            select(Environment).where(
                Environment.workspace_id == workspace.id, Environment.name == ref
            )
        )
    if env is None or (workspace is not None and env.workspace_id != workspace.id):
        raise NotFound(f"no environment {ref!r}")
    return env


def list_environments(s: Session, workspace: Workspace | None = None) -> list[Environment]:
    q = select(Environment).order_by(Environment.created_at)
    if workspace is not None:
        q = q.where(Environment.workspace_id == workspace.id)
    return list(s.scalars(q))


def add_key(s: Session, key: ApiKey) -> ApiKey:
    """Store a key minted by ``auth.api_keys.mint_key`` (only its hash and display form)."""
    s.add(key)
    s.flush()
    return key


def list_keys(s: Session, environment: Environment | None = None) -> list[ApiKey]:
    q = select(ApiKey).order_by(ApiKey.created_at)
    if environment is not None:
        q = q.where(ApiKey.environment_id == environment.id)
    return list(s.scalars(q))


def revoke_key(s: Session, key_id: str) -> ApiKey:
    key = s.get(ApiKey, key_id)
    if key is None:
        raise NotFound(f"no key {key_id!r}")
    if key.revoked_at is None:
        key.revoked_at = utcnow()
    return key


@dataclass(frozen=True, slots=True)
class KeyGrant:
    """What an active API key grants: the columns every authenticated request needs."""

    key_id: str
    kind: str
    key_hash: str
    user_id: str | None
    workspace_id: str
    environment_id: str
    redact_secrets: bool
    revoked: bool


# Built once: this runs on every authenticated request, where building the statement
# (and ORM objects for its rows) took longer than the lookup itself.
_KEY = (
    select(
        ApiKey.id,
        ApiKey.kind,
        ApiKey.key_hash,
        ApiKey.user_id,
        Environment.workspace_id,
        Environment.id,
        Environment.redact_secrets,
        ApiKey.revoked_at.is_not(None),
    )
    .join(Environment, Environment.id == ApiKey.environment_id)
    .where(ApiKey.key_hash == bindparam("key_hash"))
)


def key_by_hash(c: Connection | Session, key_hash: str) -> KeyGrant | None:
    """The key of this hash, revoked or not (a revoked one says so: ``revoked``)."""
    row = c.execute(_KEY, {"key_hash": key_hash}).first()
    return KeyGrant(*row) if row else None
