"""Integrations, authorization codes, installations and OAuth tokens.

Time is always passed in (``now``), so tests can place a call exactly at an
expiry boundary without a patched clock.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from limelight.ids import new_id
from limelight.store.meta.accounts_models import (
    AuthorizationCode,
    Installation,
    InstallationEnvironment,
    Integration,
    OAuthToken,
    User,
)
from limelight.store.meta.models import ApiKey, Environment, Workspace

ACCESS = "access"
REFRESH = "refresh"


# -- integrations -------------------------------------------------------------------------


def create_integration(
    s: Session,
    *,
    name: str,
    description: str,
    logo_svg: str,
    redirect_url: str,
    secret_hash: str,
    secret_display: str,
    now: datetime,
) -> Integration:
    integration = Integration(
        id=new_id(16),  # the Client ID: public, but unguessable all the same
        name=name,
        description=description,
        logo_svg=logo_svg,
        redirect_url=redirect_url,
        secret_hash=secret_hash,
        secret_display=secret_display,
        created_at=now,
    )
    s.add(integration)
    s.flush()
    return integration


def get_integration(s: Session, client_id: str) -> Integration | None:
    return s.get(Integration, client_id) if client_id else None


def list_integrations(s: Session) -> list[Integration]:
    return list(s.scalars(select(Integration).order_by(Integration.created_at)))


def replace_secret(
    s: Session, integration: Integration, secret_hash: str, secret_display: str, now: datetime
) -> int:
    """New secret; the old one stops working at once and so do the tokens issued so far
    (a rotated secret may have leaked, and tokens obtained with it go too: RFC 6819
    5.2.2.4). Installations and their keys stay. Returns the number of tokens revoked."""
    integration.secret_hash = secret_hash
    integration.secret_display = secret_display
    result = s.execute(
        update(OAuthToken)
        .where(OAuthToken.integration_id == integration.id, OAuthToken.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


def delete_integration(s: Session, integration: Integration, now: datetime) -> int:
    """Uninstall everywhere (keys revoked at once), then forget the integration; the
    number of installations that were active (those uninstalled before are not counted)."""
    installs = list(
        s.scalars(
            select(Installation.id).where(
                Installation.integration_id == integration.id, Installation.revoked_at.is_(None)
            )
        )
    )
    for installation_id in installs:
        revoke_installation(s, installation_id, now)
    s.delete(integration)
    s.flush()
    return len(installs)


# -- authorization codes ------------------------------------------------------------------


@dataclass(frozen=True)
class CodeGrant:
    """What an unused, unexpired code was bound to when it was issued."""

    code_id: str
    integration_id: str
    user_id: str
    workspace_id: str
    environment_ids: tuple[str, ...]
    redirect_uri: str
    code_challenge: str | None


def create_code(
    s: Session,
    *,
    code_hash: str,
    integration_id: str,
    user_id: str,
    workspace_id: str,
    environment_ids: list[str],
    redirect_uri: str,
    code_challenge: str | None,
    now: datetime,
    lifetime: int,
) -> AuthorizationCode:
    code = AuthorizationCode(
        id=new_id(),
        code_hash=code_hash,
        integration_id=integration_id,
        user_id=user_id,
        workspace_id=workspace_id,
        environment_ids=json.dumps(sorted(environment_ids)),
        redirect_uri=redirect_uri,
        code_challenge=code_challenge,
        created_at=now,
        expires_at=now + timedelta(seconds=lifetime),
    )
    s.add(code)
    s.flush()
    return code


def consume_code(
    s: Session, code_hash: str, integration_id: str, now: datetime
) -> CodeGrant | None:
    """Mark the code used, if it is this client's, unused and unexpired: one statement.

    The check and the write are a single UPDATE ... RETURNING, so of any number
    of concurrent exchanges exactly one gets a row (PostgreSQL re-checks the
    WHERE after a concurrent update; SQLite serialises writers). It runs in the
    transaction that then issues the tokens: if that fails, the code is unused.
    """
    C = AuthorizationCode
    row = s.execute(
        update(C)
        .where(
            C.code_hash == code_hash,
            C.integration_id == integration_id,
            C.used_at.is_(None),
            C.expires_at > now,
        )
        .values(used_at=now)
        .returning(
            C.id,
            C.integration_id,
            C.user_id,
            C.workspace_id,
            C.environment_ids,
            C.redirect_uri,
            C.code_challenge,
        )
        .execution_options(synchronize_session=False)
    ).first()
    if row is None:
        return None
    return CodeGrant(
        code_id=row[0],
        integration_id=row[1],
        user_id=row[2],
        workspace_id=row[3],
        environment_ids=tuple(json.loads(row[4])),
        redirect_uri=row[5],
        code_challenge=row[6],
    )


def code_by_hash(s: Session, code_hash: str) -> AuthorizationCode | None:
    return s.scalar(select(AuthorizationCode).where(AuthorizationCode.code_hash == code_hash))


# -- installations ------------------------------------------------------------------------


def add_installation(s: Session, grant: CodeGrant, now: datetime) -> Installation:
    """Record an installation of the grant's integration (its keys are added after)."""
    installation = Installation(
        id=new_id(),
        integration_id=grant.integration_id,
        user_id=grant.user_id,
        workspace_id=grant.workspace_id,
        created_at=now,
    )
    s.add(installation)
    s.flush()
    return installation


def link_key(s: Session, installation_id: str, environment_id: str, key_id: str) -> None:
    s.add(
        InstallationEnvironment(
            installation_id=installation_id, environment_id=environment_id, api_key_id=key_id
        )
    )


def mark_code_used(s: Session, code_id: str, installation_id: str) -> None:
    s.execute(
        update(AuthorizationCode)
        .where(AuthorizationCode.id == code_id)
        .values(installation_id=installation_id)
    )
    s.flush()


def revoke_installation(s: Session, installation_id: str, now: datetime) -> None:
    """Its tokens and its minted keys stop working from the next request on."""
    s.execute(
        update(Installation)
        .where(Installation.id == installation_id, Installation.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    s.execute(
        update(OAuthToken)
        .where(OAuthToken.installation_id == installation_id, OAuthToken.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    s.execute(
        update(ApiKey)
        .where(ApiKey.installation_id == installation_id, ApiKey.revoked_at.is_(None))
        .values(revoked_at=now)
    )


def active_installations(
    s: Session,
    *,
    integration_id: str | None = None,
    user_id: str | None = None,
    workspace_id: str | None = None,
) -> list[tuple[Installation, Integration, Workspace, User]]:
    q = (
        select(Installation, Integration, Workspace, User)
        .join(Integration, Integration.id == Installation.integration_id)
        .join(Workspace, Workspace.id == Installation.workspace_id)
        .join(User, User.id == Installation.user_id)
        .where(Installation.revoked_at.is_(None))
        .order_by(Installation.created_at)
    )
    if integration_id is not None:
        q = q.where(Installation.integration_id == integration_id)
    if user_id is not None:
        q = q.where(Installation.user_id == user_id)
    if workspace_id is not None:
        q = q.where(Installation.workspace_id == workspace_id)
    return [(r[0], r[1], r[2], r[3]) for r in s.execute(q)]


@dataclass(frozen=True)
class GrantedEnvironment:
    workspace_id: str
    environment_id: str
    environment_name: str
    api_key: str


def granted_environments(s: Session, installation_id: str) -> list[GrantedEnvironment]:
    rows = s.execute(
        select(Environment, ApiKey)
        .join(InstallationEnvironment, InstallationEnvironment.environment_id == Environment.id)
        .join(ApiKey, ApiKey.id == InstallationEnvironment.api_key_id)
        .where(
            InstallationEnvironment.installation_id == installation_id,
            ApiKey.revoked_at.is_(None),
        )
        .order_by(Environment.name)
    )
    return [
        GrantedEnvironment(env.workspace_id, env.id, env.name, key.public_value or "")
        for env, key in rows
    ]


# -- tokens -------------------------------------------------------------------------------


def issue_token(
    s: Session,
    *,
    kind: str,
    token_hash: str,
    installation: Installation,
    now: datetime,
    lifetime: int,
    refresh_id: str | None = None,
) -> OAuthToken:
    token = OAuthToken(
        id=new_id(),
        token_hash=token_hash,
        kind=kind,
        integration_id=installation.integration_id,
        installation_id=installation.id,
        refresh_id=refresh_id,
        created_at=now,
        expires_at=now + timedelta(seconds=lifetime),
    )
    s.add(token)
    s.flush()
    return token


def active_token(
    s: Session, token_hash: str, kind: str, now: datetime, *, lock: bool = False
) -> tuple[OAuthToken, Installation] | None:
    """Unrevoked, unexpired, of a live installation. Checked on every request (no cache),
    so an uninstall takes effect at once.

    ``lock`` holds the token's row to the end of the transaction (FOR UPDATE), for a
    grant that issues from it: on PostgreSQL a refresh that read its token just before a
    revocation committed made an access token the revocation never saw (it revokes the
    access tokens it finds), which then lived out its lifetime. Locked, the refresh waits
    for the revocation and finds its token revoked, or the revocation waits for the
    refresh and finds the access token. SQLite's immediate transactions serialise both."""
    query = (
        select(OAuthToken, Installation)
        .join(Installation, Installation.id == OAuthToken.installation_id)
        .where(
            OAuthToken.token_hash == token_hash,
            OAuthToken.kind == kind,
            OAuthToken.revoked_at.is_(None),
            OAuthToken.expires_at > now,
            Installation.revoked_at.is_(None),
        )
    )
    row = s.execute(query.with_for_update(of=OAuthToken) if lock else query).first()
    return (row[0], row[1]) if row else None


def token_by_hash(s: Session, token_hash: str) -> OAuthToken | None:
    return s.scalar(select(OAuthToken).where(OAuthToken.token_hash == token_hash))


def revoke_token(s: Session, token: OAuthToken, now: datetime) -> None:
    """Revoking a refresh token also revokes the access tokens made from it (RFC 7009 2.1)."""
    if token.revoked_at is None:
        token.revoked_at = now
    if token.kind == REFRESH:
        s.execute(
            update(OAuthToken)
            .where(OAuthToken.refresh_id == token.id, OAuthToken.revoked_at.is_(None))
            .values(revoked_at=now)
        )
    s.flush()
