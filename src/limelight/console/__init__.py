"""The web console: server-rendered pages (Jinja2) with small scripts of its own, served
by the app with everything they use (no CDN, no build step)."""

from __future__ import annotations

from fastapi import FastAPI

from limelight.auth.sessions import Sessions
from limelight.auth.throttle import FailedAuthThrottle
from limelight.console import (
    alerts,
    authorize,
    builder,
    datasets,
    explorer,
    home,
    keys,
    login,
    static,
    tail,
    traces,
)
from limelight.runtime import Runtime


def install_console(app: FastAPI, runtime: Runtime) -> None:
    """Console routes, sharing the failed-authentication limits with the OAuth endpoints."""
    throttle = getattr(app.state, "auth_throttle", None) or FailedAuthThrottle(runtime.settings)
    app.state.auth_throttle = throttle
    app.state.sessions = Sessions(runtime.meta, runtime.settings, throttle)
    app.state.tail_slots = tail.TailSlots()
    for module in (
        authorize,
        login,
        home,
        static,
        datasets,
        tail,  # before the explorer: /events/tail is not an event's page
        explorer,
        builder,
        traces,
        keys,
        alerts,
    ):
        app.include_router(module.router)
