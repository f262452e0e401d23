"""``limelight serve``, ``bootstrap``, ``migrate`` and ``worker``: running an installation."""

from __future__ import annotations

import logging
import signal
import threading
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from limelight.auth.sessions import signing_key
from limelight.bootstrap import BootstrapResult, ensure_default
from limelight.cli.failures import BadUsage
from limelight.cli.installation import installation, private_from_now
from limelight.cli.output import Cell, JsonFlag, note, print_fields, print_json, say
from limelight.data_lock import DataDirLock, holder, new_operator_token
from limelight.http_server import ensure_port_free
from limelight.logs import configure_logging
from limelight.settings import Settings
from limelight.store.meta import repos

if TYPE_CHECKING:
    # The app (FastAPI, every route) costs a quarter of a second to import: only
    # `serve` needs it, not every command.
    from limelight.app import AppName

log = logging.getLogger("limelight.server")


def _print_bootstrap(result: BootstrapResult, settings: Settings, app_name: AppName) -> None:
    fields: list[tuple[str, Cell]] = [
        ("Workspace", f"default ({result.workspace_id})"),
        ("Environment", f"prod ({result.environment_id})"),
        ("Ingest key", result.ingest_key),
        ("Admin key", result.admin_key or f"{result.admin_key_display} (shown only when created)"),
        ("Admin user", result.admin_email),
    ]
    if result.admin_password:
        fields.append(("Password", result.admin_password))
    from limelight.app import served_urls

    print_fields([*fields, *served_urls(settings, app_name)])
    if result.admin_key or result.admin_password:
        note(
            "the admin key and the password are shown once: keep them"
            f" (limelight users set-password {result.admin_email} makes a new password)"
        )
    else:
        note("make another admin key with: limelight keys create --kind admin")


def bootstrap(as_json: JsonFlag = False) -> None:
    """Ensure workspace 'default' with environment 'prod', an ingest key and an admin key."""
    inst = installation()
    with inst.session(immediate=True) as s:
        result = ensure_default(s, inst.settings.redact_secrets)
    if as_json:
        print_json(
            {
                "workspaceId": result.workspace_id,
                "environmentId": result.environment_id,
                "ingestKey": result.ingest_key,
                "adminKey": result.admin_key,
                "adminEmail": result.admin_email,
                "adminPassword": result.admin_password,
            }
        )
    else:
        _print_bootstrap(result, _as_served(inst.settings), "all")


def _as_served(settings: Settings) -> Settings:
    """The settings with the address of the server that holds the data directory, when
    one does and no public URL is set: its own port, not this command's default."""
    held = holder(settings.data_dir)
    if settings.public_url or held is None or not held.url:
        return settings
    return settings.model_copy(update={"public_url": held.url})


def migrate() -> None:
    """Apply the metadata migrations (serve does this too)."""
    installation().meta  # noqa: B018 - opening it migrates
    say("metadata schema is up to date")


def loopback_url(settings: Settings) -> str:
    """Where this machine reaches the server (the operator's CLI asks it there)."""
    host = settings.host
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{settings.port}"


def serve(
    app_name: Annotated[
        Literal["all", "events", "otel"],
        typer.Option("--app", help="all; events or otel to serve that API alone at /"),
    ] = "all",
    workers: Annotated[
        int, typer.Option(min=1, help="API processes on the one port (server mode only).")
    ] = 1,
) -> None:
    """Migrate, bootstrap an empty database, and serve on LIMELIGHT_HOST:LIMELIGHT_PORT."""
    from limelight.http_server import serve as serve_http

    inst = installation()
    settings = inst.settings
    if workers > 1 and settings.events_backend == "chdb":
        raise BadUsage(
            "--workers needs the server mode (LIMELIGHT_EVENTS_BACKEND=clickhouse and"
            " LIMELIGHT_DATABASE_URL on PostgreSQL): the embedded engine allows one process"
            " per data directory"
        )
    # Both before anything is created or printed: a second server must not make a
    # database, print keys "shown once", and only then fail.
    ensure_port_free(settings.host, settings.port)
    private_from_now(settings)
    lock = DataDirLock(settings.data_dir)
    if settings.events_backend == "chdb":
        lock.acquire(loopback_url(settings))
        new_operator_token(settings.data_dir)
    if app_name == "all":
        # Made here, once, before the API processes start (they only read it), and
        # refused before any key "shown once" is printed.
        signing_key(settings)
    configure_logging(settings)
    try:
        inst.quiet = True  # the serving line names the installation
        with inst.session(immediate=True) as s:
            fresh = not repos.list_workspaces(s)
            result = ensure_default(s, settings.redact_secrets) if fresh else None
        inst.close()
        if result is not None:
            _print_bootstrap(result, settings, app_name)
        serve_http(settings, app_name, workers)
    finally:
        lock.release()


def worker() -> None:
    """Check due alerts and apply retention until stopped (server mode: beside any number
    of API processes)."""
    from limelight.alerts.evaluator import Evaluator
    from limelight.retention import Retention
    from limelight.runtime import shared_counts
    from limelight.store.events import open_event_store

    inst = installation()
    settings = inst.settings
    if settings.events_backend == "chdb":
        raise BadUsage(
            "limelight worker needs the server mode (LIMELIGHT_EVENTS_BACKEND=clickhouse): "
            "the embedded engine allows one process per data directory, and limelight serve "
            "checks alerts itself"
        )
    configure_logging(settings)
    meta = inst.meta
    events = open_event_store(settings)
    with meta.startup_lock():  # beside API processes starting on the same stores
        events.start()
    # The notification quotas are the deployment's, whichever worker sends.
    evaluator = Evaluator(settings, meta, events, counts=shared_counts(settings, meta))
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    retention = Retention(settings, meta, events)
    evaluator.start()
    if settings.retention_enforce:
        retention.start()
    log.info("checking alerts as %s", evaluator.owner)
    stop.wait()
    retention.close()
    evaluator.close()
    events.close()
