"""The ASGI application: one listener, each API at its base address."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Literal

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool

from limelight.api.alerts import router as alerts_router
from limelight.api.datasets import router as datasets_router
from limelight.api.events import create_events_app
from limelight.api.oauth import install_oauth
from limelight.api.otel import create_otel_app
from limelight.api.queries import router as queries_router
from limelight.api.query_runs import router as query_runs_router
from limelight.api.recent import router as recent_router
from limelight.console import install_console
from limelight.runtime import Runtime
from limelight.settings import Settings
from limelight.web.problems import install_error_handlers

Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]


def runtime_lifespan(rt: Runtime) -> Lifespan:
    """Open the engines when the server starts, close them when it stops."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(rt.start)
        try:
            yield
        finally:
            await run_in_threadpool(rt.close)

    return lifespan


def create_app(settings: Settings, runtime: Runtime | None = None) -> FastAPI:
    """Build the whole server. Engines open in the lifespan, not here."""
    rt = runtime or Runtime.build(settings)
    app = FastAPI(title="Limelight", lifespan=runtime_lifespan(rt), docs_url=None, redoc_url=None)
    app.state.runtime = rt
    install_error_handlers(app)

    @app.get("/health", include_in_schema=False)
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    app.include_router(recent_router)
    install_oauth(app, rt)
    install_console(app, rt)
    app.include_router(queries_router)
    app.include_router(query_runs_router)
    app.include_router(alerts_router)
    app.include_router(datasets_router)

    # The Events API and the Queries API both live under /v1, so events get
    # their own prefix (a dataset named "queries" would otherwise collide).
    app.mount("/events", create_events_app(rt))
    app.mount("/otel", create_otel_app(rt))
    return app


AppName = Literal["all", "events", "otel"]


def create_named_app(settings: Settings, name: AppName) -> FastAPI:
    """One API alone at / (for deployments that give each base address a host)."""
    if name == "all":
        return create_app(settings)
    rt = Runtime.build(settings)
    app = create_otel_app(rt) if name == "otel" else create_events_app(rt)
    app.router.lifespan_context = runtime_lifespan(rt)
    return app
