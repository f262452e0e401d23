"""The install step: checking an authorization request, and the developer's answer.

Until the client and its redirect are known good, every problem is shown on
an error page and the browser is never sent anywhere (RFC 6749 4.1.2.1; an
open redirector is how codes get stolen). After that, problems go back to the
integration as ``error=...`` with the unchanged ``state``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from limelight.auth.oauth import pkce
from limelight.auth.oauth.redirects import host_of, with_params
from limelight.auth.secrets import SecretKind, hash_secret, new_secret
from limelight.errors import ControlFlow
from limelight.store.meta import oauth_repo as repo
from limelight.store.meta.accounts_repo import is_member, workspaces_of
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import Environment, Workspace
from limelight.store.meta.repos import list_environments

# The parameters this step reads; each may appear once at most (RFC 6749 3.1).
PARAMS = (
    "response_type",
    "client_id",
    "clientId",
    "redirect_uri",
    "state",
    "code_challenge",
    "code_challenge_method",
)


class ErrorPage(ControlFlow):
    """Shown to the developer; the integration hears nothing."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class ErrorRedirect(ControlFlow):
    """Sent back to the integration's (verified) redirect URL."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url


@dataclass(frozen=True)
class AuthorizeRequest:
    client_id: str
    client_name: str
    client_description: str
    redirect_uri: str
    state: str | None
    code_challenge: str | None

    @property
    def redirect_host(self) -> str:
        return host_of(self.redirect_uri)

    def back(self, **params: str) -> str:
        """The redirect URL with ``params`` and, when there was one, the state."""
        if self.state is not None:
            params["state"] = self.state
        return with_params(self.redirect_uri, params)

    def hidden_fields(self) -> dict[str, str]:
        """What the consent form posts back, to check it all again."""
        fields = {"response_type": "code", "client_id": self.client_id}
        fields["redirect_uri"] = self.redirect_uri
        if self.state is not None:
            fields["state"] = self.state
        if self.code_challenge is not None:
            fields["code_challenge"] = self.code_challenge
            fields["code_challenge_method"] = "S256"
        return fields


def _single(pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    found: dict[str, str] = {}
    for key, value in pairs:
        if key not in PARAMS:
            continue
        if key in found:
            raise ErrorPage(f"the parameter {key} is given more than once")
        found[key] = value
    return found


def check_request(db: MetaDB, pairs: Sequence[tuple[str, str]]) -> AuthorizeRequest:
    params = _single(pairs)
    client_id = params.get("client_id") or params.get("clientId")
    if not client_id:
        raise ErrorPage("the link is missing its client_id")
    if not client_id.isprintable() or not client_id.isascii():  # no id holds such characters
        raise ErrorPage("this link names an integration that does not exist", 404)
    with db.session() as s:
        integration = repo.get_integration(s, client_id)
        if integration is None:
            raise ErrorPage("this link names an integration that does not exist", 404)
        registered = integration.redirect_url
        name, description = integration.name, integration.description
    redirect = params.get("redirect_uri", registered)
    if redirect != registered:  # exact string match, nothing else (RFC 9700 2.1)
        raise ErrorPage("the redirect URL does not match the one the integration registered")
    req = AuthorizeRequest(
        client_id=integration.id,
        client_name=name,
        client_description=description,
        redirect_uri=registered,
        state=params.get("state"),
        code_challenge=params.get("code_challenge") or None,
    )
    response_type = params.get("response_type")
    if response_type is None:
        raise ErrorRedirect(req.back(error="invalid_request", error_description="no response_type"))
    if response_type != "code":
        raise ErrorRedirect(
            req.back(error="unsupported_response_type", error_description="use response_type=code")
        )
    method = params.get("code_challenge_method")
    if req.code_challenge is not None:
        if method != "S256" or not pkce.valid_challenge(req.code_challenge):
            raise ErrorRedirect(
                req.back(
                    error="invalid_request",
                    error_description="code_challenge must be S256 (43-128 characters)",
                )
            )
    elif method is not None:
        raise ErrorRedirect(
            req.back(error="invalid_request", error_description="code_challenge is missing")
        )
    return req


@dataclass(frozen=True)
class Choice:
    """A workspace the developer may grant, with its environments."""

    workspace: Workspace
    environments: list[Environment]


def choices(db: MetaDB, user_id: str) -> list[Choice]:
    with db.session() as s:
        return [Choice(ws, list_environments(s, ws)) for ws in workspaces_of(s, user_id)]


def approve(
    db: MetaDB,
    req: AuthorizeRequest,
    *,
    user_id: str,
    workspace_id: str,
    environment_ids: Sequence[str],
    now: datetime,
    lifetime: int,
) -> str:
    """Issue a code bound to this client, redirect, user, workspace and environments;
    returns where to send the browser. The developer's rights are checked here, on
    the server, whatever the form held (no granting someone else's environments)."""
    if not environment_ids:
        raise ErrorPage("choose at least one environment to grant")
    code = new_secret(SecretKind.AUTH_CODE)
    with db.session(immediate=True) as s:
        if not is_member(s, user_id, workspace_id):
            raise ErrorPage("you are not a member of that workspace", 403)
        for env_id in set(environment_ids):
            env = s.get(Environment, env_id)
            if env is None or env.workspace_id != workspace_id:
                raise ErrorPage("that environment is not in the chosen workspace", 403)
        repo.create_code(
            s,
            code_hash=hash_secret(code),
            integration_id=req.client_id,
            user_id=user_id,
            workspace_id=workspace_id,
            environment_ids=sorted(set(environment_ids)),
            redirect_uri=req.redirect_uri,
            code_challenge=req.code_challenge,
            now=now,
            lifetime=lifetime,
        )
    return req.back(code=code)


def deny(req: AuthorizeRequest) -> str:
    return req.back(error="access_denied", error_description="the developer declined")
