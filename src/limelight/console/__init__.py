"""The web console: server-rendered pages (Jinja2), no scripts."""

from __future__ import annotations

from fastapi import FastAPI

from limelight.auth.sessions import Sessions
from limelight.console.authorize import router as authorize_router
from limelight.console.routes import router as pages_router
from limelight.runtime import Runtime


def install_console(app: FastAPI, runtime: Runtime) -> None:
    """Console routes, sharing the failed-authentication limits with the OAuth endpoints."""
    app.state.sessions = Sessions(runtime.meta, runtime.settings, runtime.throttle)
    app.include_router(authorize_router)
    app.include_router(pages_router)
