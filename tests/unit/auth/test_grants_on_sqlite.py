"""The grants against a real SQLite database, with a clock we move (T4, E1, R2)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from sqlalchemy import delete

from limelight.auth.oauth.authorize import AuthorizeRequest, approve
from limelight.auth.oauth.server import HttpInput, OAuthResponse, OAuthServer
from limelight.auth.secrets import SecretKind, display, hash_secret, new_secret
from limelight.auth.throttle import FailedAuthThrottle
from limelight.settings import Settings
from limelight.store.meta import accounts_repo, oauth_repo, repos
from limelight.store.meta.accounts_models import Membership
from limelight.store.meta.db import MetaDB
from tests.support import migrated_sqlite

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
REDIRECT = "https://app.example.com/cb"


@dataclass
class World:
    server: OAuthServer
    db: MetaDB
    settings: Settings
    client_id: str
    secret: str
    user_id: str
    workspace_id: str
    env_id: str
    now: list[datetime]

    def code(self, at: datetime) -> str:
        req = AuthorizeRequest(self.client_id, "App", "d", REDIRECT, None, None)
        url = approve(self.db, req, user_id=self.user_id, workspace_id=self.workspace_id,
                      environment_ids=[self.env_id], now=at, lifetime=180)  # fmt: skip
        return url.split("code=", 1)[1]

    def token(self, **fields: str) -> OAuthResponse:
        body = {"clientId": self.client_id, "clientSecret": self.secret, "redirect": REDIRECT}
        http = HttpInput(JSON, orjson.dumps(body | fields), "", None, "127.0.0.1")
        return self.server.token(http)

    def exchange(self, code: str) -> OAuthResponse:
        return self.token(grantType="authorization_code", code=code)

    def refresh(self, token: str) -> OAuthResponse:
        return self.token(grantType="refresh_token", refreshToken=token)

    def environments(self, access: str) -> OAuthResponse:
        return self.server.environments(f"Bearer {access}", "")


JSON = "application/json"


@pytest.fixture()
def world(tmp_path: Path) -> World:
    settings = Settings(data_dir=tmp_path)
    db = migrated_sqlite(tmp_path / "meta.db")
    assert db.url == settings.resolved_database_url
    return new_world(db, settings)


def new_world(db: MetaDB, settings: Settings) -> World:
    """A workspace with a member and an integration, on ``db``."""
    secret = new_secret(SecretKind.CLIENT_SECRET)
    with db.session(immediate=True) as s:
        ws = repos.create_workspace(s, "w")
        env = repos.create_environment(s, ws, "prod", True)
        user = accounts_repo.create_user(s, "dev@example.com", "x", T0)
        accounts_repo.add_member(s, user, ws, T0)
        integration = oauth_repo.create_integration(
            s, name="App", description="d", logo_svg="<svg/>", redirect_url=REDIRECT,
            secret_hash=hash_secret(secret), secret_display=display(secret), now=T0,
        )  # fmt: skip
        ids = (integration.id, user.id, ws.id, env.id)
    now = [T0]
    server = OAuthServer(db, settings, FailedAuthThrottle(settings), clock=lambda: now[0])
    return World(server, db, settings, ids[0], secret, ids[1], ids[2], ids[3], now)


def test_t4_a_code_lives_180_seconds(world: World) -> None:
    code = world.code(T0)
    world.now[0] = T0 + timedelta(seconds=181)
    late = world.exchange(code)
    assert (late.status, late.body["error"]) == (400, "invalid_grant")
    assert "expired" in late.body["message"]

    code = world.code(T0)
    world.now[0] = T0 + timedelta(seconds=179)
    assert world.exchange(code).status == 200


def test_consume_code_is_exact_at_the_boundary(world: World) -> None:
    code = world.code(T0)
    with world.db.session() as s:
        end = T0 + timedelta(seconds=180)
        assert oauth_repo.consume_code(s, hash_secret(code), world.client_id, end) is None
        assert oauth_repo.consume_code(s, hash_secret(code), "other", T0) is None
        grant = oauth_repo.consume_code(
            s, hash_secret(code), world.client_id, end - timedelta(seconds=1)
        )
        assert grant is not None and grant.environment_ids == (world.env_id,)
        assert oauth_repo.consume_code(s, hash_secret(code), world.client_id, T0) is None


def test_e1_an_access_token_expires_after_86400_seconds(world: World) -> None:
    tokens = world.exchange(world.code(T0)).body
    assert tokens["expiresIn"] == 86400
    world.now[0] = T0 + timedelta(seconds=86399)
    assert world.environments(tokens["accessToken"]).status == 200
    world.now[0] = T0 + timedelta(seconds=86401)
    expired = world.environments(tokens["accessToken"])
    assert expired.status == 401
    assert 'error="invalid_token"' in expired.headers["WWW-Authenticate"]
    # The refresh token still gives a new one (contract 5.3).
    renewed = world.refresh(tokens["refreshToken"]).body
    assert world.environments(renewed["accessToken"]).status == 200


def test_r2_refresh_tokens_expire_when_idle_and_absolutely(world: World) -> None:
    idle = world.settings.oauth_refresh_token_idle
    tokens = world.exchange(world.code(T0)).body
    world.now[0] = T0 + timedelta(seconds=idle - 1)
    assert world.refresh(tokens["refreshToken"]).status == 200  # use resets the idle clock
    world.now[0] += timedelta(seconds=idle - 1)
    assert world.refresh(tokens["refreshToken"]).status == 200
    world.now[0] += timedelta(seconds=idle + 1)
    assert world.refresh(tokens["refreshToken"]).body["error"] == "invalid_grant"

    tokens = world.exchange(world.code(world.now[0])).body
    start, lifetime = world.now[0], world.settings.oauth_refresh_token_lifetime
    while world.now[0] < start + timedelta(seconds=lifetime - idle):
        world.now[0] += timedelta(seconds=idle - 10)
        assert world.refresh(tokens["refreshToken"]).status == 200
    world.now[0] = start + timedelta(seconds=lifetime + 1)
    assert world.refresh(tokens["refreshToken"]).body["error"] == "invalid_grant"


def test_a6_rights_are_checked_again_at_the_exchange(world: World) -> None:
    code = world.code(T0)
    with world.db.session() as s:
        s.execute(delete(Membership).where(Membership.user_id == world.user_id))
    answer = world.exchange(code)
    assert (answer.status, answer.body["error"]) == (400, "invalid_grant")
