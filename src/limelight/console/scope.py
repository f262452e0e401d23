"""Where a signed-in user is: an environment of a workspace they belong to.

Every environment page names its environment in the path (``/env/<id>/...``)
and is answered only for a member of its workspace; for anyone else an id is
unknown, exactly like an id that never existed (404), whatever is typed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from limelight.auth.environments import EnvChoice, environments_of
from limelight.auth.sessions import SessionUser
from limelight.console.session import sessions_of, signed_in
from limelight.errors import NotFound
from limelight.tenant import Tenant
from limelight.web.access import note_tenant
from limelight.web.request import runtime_of


@dataclass(frozen=True)
class Place:
    """The user, the environment of the page, and every environment they may switch to."""

    user: SessionUser
    env: EnvChoice
    choices: list[EnvChoice]
    csrf: str

    @property
    def tenant(self) -> Tenant:
        return self.env.tenant

    @property
    def base(self) -> str:
        """The path every page of this environment starts with."""
        return f"/env/{self.env.environment_id}"


async def place_of(request: Request, user: SessionUser, environment_id: str) -> Place:
    choices = await run_in_threadpool(environments_of, runtime_of(request).meta, user.user_id)
    env = next((c for c in choices if c.environment_id == environment_id), None)
    if env is None:
        raise NotFound()
    note_tenant(request, env.tenant)  # for the access log, once the user is a member
    return Place(user, env, choices, sessions_of(request).csrf_token(user.binding))


async def place(
    request: Request, environment_id: str, user: Annotated[SessionUser, Depends(signed_in)]
) -> Place:
    return await place_of(request, user, environment_id)


Here = Annotated[Place, Depends(place)]
