"""The ASGI application: one listener, each API at its base address."""

from __future__ import annotations

import logging
import os
import platform
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from importlib.metadata import version
from typing import Literal

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool

from limelight import metrics
from limelight.api.alerts import router as alerts_router
from limelight.api.boards import router as boards_router
from limelight.api.datasets import router as datasets_router
from limelight.api.es import create_es_app, es_endpoint
from limelight.api.events import create_events_app
from limelight.api.hec import create_hec_app, hec_endpoint
from limelight.api.investigate import router as investigate_router
from limelight.api.loki import create_loki_app
from limelight.api.managed import router as managed_router
from limelight.api.metrics import metrics_route
from limelight.api.oauth import install_oauth
from limelight.api.observe import Observe
from limelight.api.openapi_document import install_openapi
from limelight.api.operator import operator_routes
from limelight.api.otel import create_otel_app
from limelight.api.queries import router as queries_router
from limelight.api.query_runs import router as query_runs_router
from limelight.api.recent import router as recent_router
from limelight.api.traces import router as traces_router
from limelight.console import install_console
from limelight.runtime import Runtime
from limelight.settings import Settings
from limelight.web.problems import install_error_handlers
from limelight.web.request import EVERY_METHOD

log = logging.getLogger("limelight.server")

Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]
AppName = Literal["all", "events", "otel"]


def served_urls(settings: Settings, name: AppName) -> list[tuple[str, str]]:
    """What the app ``name`` serves, by name and address: only what it serves."""
    base = settings.base_url
    if name == "events":
        return [("Events URL", f"{base}/v1/<dataset>")]
    if name == "otel":
        return [("OTLP URL", f"{base}/v1/traces")]
    return [
        ("Console", f"{base}/"),
        ("Events URL", f"{settings.events_url}/v1/<dataset>"),
        ("Queries URL", f"{settings.queries_url}/v1/queries"),
        ("OAuth URL", f"{settings.auth_url}/oauth"),
        ("OTLP URL", f"{settings.otel_url}/v1/traces"),
    ]


def _say_serving(rt: Runtime, name: AppName) -> None:
    """The one line a serving process logs once it is ready: where, on what, which versions."""
    settings = rt.settings
    urls = served_urls(settings, name)
    engine = "chDB" if settings.events_backend == "chdb" else "ClickHouse server"
    versions = {
        "limelight": version("limelight"),
        "python": platform.python_version(),
        "clickhouse": rt.events.engine_version(),
    }
    log.info(
        "serving %s; %s; limelight %s, Python %s, ClickHouse %s (%s)",
        ", ".join(f"{label.lower()} {url}" for label, url in urls),
        settings.stores,
        versions["limelight"],
        versions["python"],
        versions["clickhouse"],
        engine,
        extra={"urls": dict(urls), "data_dir": str(settings.data_dir), "versions": versions},
    )


def runtime_lifespan(rt: Runtime, name: AppName = "all") -> Lifespan:
    """Open the engines when the server starts, close them when it stops."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(rt.start)
        await run_in_threadpool(_say_serving, rt, name)
        started = time.monotonic()
        try:
            yield
        finally:
            try:
                await run_in_threadpool(rt.close)
            finally:
                metrics.process_exited(os.getpid())
                # The serving line's counterpart: a log that ends without it ended in a crash.
                served = time.monotonic() - started
                log.info("stopped after serving for %.0fs", served, extra={"served_s": served})

    return lifespan


def create_app(settings: Settings, runtime: Runtime | None = None) -> FastAPI:
    """Build the whole server. Engines open in the lifespan, not here."""
    rt = runtime or Runtime.build(settings)
    app = FastAPI(title="Limelight", lifespan=runtime_lifespan(rt), docs_url=None, redoc_url=None)
    app.state.runtime = rt
    install_error_handlers(app)
    # Around every request, the mounted Events and OTLP apps included.
    app.add_middleware(Observe, access_log=settings.access_log)

    @app.get("/health", include_in_schema=False)
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    app.router.routes += [metrics_route(), *operator_routes()]
    # The Events API and the Queries API both live under /v1, so events get
    # their own prefix (a dataset named "queries" would otherwise collide).
    # Mounted before the other routes: a request is matched against the routes
    # in order, and the console's and the APIs' are many (no path of theirs
    # can match under /events or /otel: tests/unit/test_app_routes.py).
    app.mount("/events", create_events_app(rt))
    app.mount("/otel", create_otel_app(rt))
    # What log shippers send: Elasticsearch's bulk API, Loki's push API, Splunk's HEC.
    app.mount("/es", create_es_app(rt))
    app.mount("/loki", create_loki_app(rt))
    app.mount("/services/collector", create_hec_app(rt))
    # Addresses a mount does not take (it takes what is below it): Beats ask for the
    # root as /es, and Splunk's collector takes events at /services/collector itself.
    app.add_route("/es", es_endpoint, methods=EVERY_METHOD, include_in_schema=False)
    app.add_route(
        "/services/collector", hec_endpoint, methods=EVERY_METHOD, include_in_schema=False
    )
    app.include_router(recent_router)
    install_oauth(app, rt)
    install_console(app, rt)
    app.include_router(queries_router)
    app.include_router(query_runs_router)
    app.include_router(alerts_router)
    app.include_router(datasets_router)
    app.include_router(traces_router)
    app.include_router(boards_router)
    app.include_router(investigate_router)
    app.include_router(managed_router)

    install_openapi(app)
    return app


def create_named_app(settings: Settings, name: AppName) -> FastAPI:
    """One API alone at / (for deployments that give each base address a host)."""
    if name == "all":
        return create_app(settings)
    rt = Runtime.build(settings)
    app = create_otel_app(rt) if name == "otel" else create_events_app(rt)
    # Before the API's catch-all route, which would take /metrics for a dataset path.
    app.router.routes[:0] = [metrics_route(), *operator_routes()]
    app.add_middleware(Observe, access_log=settings.access_log)
    app.router.lifespan_context = runtime_lifespan(rt, name)
    return app
