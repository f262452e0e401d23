"""The ``limelight`` command: serve, bootstrap, and the operator's sub-commands.

Commands other than ``serve`` touch only the metadata database, so they can
run while a server holds the events engine.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.table import Table
from sqlalchemy.orm import Session

from limelight.auth.api_keys import KEY_KINDS, mint_key
from limelight.auth.key_owners import admin_key_owner
from limelight.bootstrap import BootstrapResult, ensure_default
from limelight.cli_accounts import integrations, users
from limelight.cli_alerts import alerts, worker
from limelight.errors import ExposedError
from limelight.settings import Settings
from limelight.store.meta import repos
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import ApiKey

app = typer.Typer(
    no_args_is_help=True, add_completion=False, help="Limelight observability platform."
)
workspaces = typer.Typer(no_args_is_help=True, help="Create and list workspaces.")
environments = typer.Typer(no_args_is_help=True, help="Create and list environments.")
keys = typer.Typer(no_args_is_help=True, help="Create, list and revoke API keys.")
app.add_typer(workspaces, name="workspaces")
app.add_typer(environments, name="environments")
app.add_typer(keys, name="keys")
app.add_typer(users, name="users")
app.add_typer(integrations, name="integrations")
app.add_typer(alerts, name="alerts")
app.command()(worker)

# Piped output gets a wide console: Rich would cut ids and keys at 80 columns.
console = Console() if sys.stdout.isatty() else Console(width=240)
# Not wrapped: an error may end in a command to copy.
errors = Console(stderr=True, soft_wrap=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


def open_meta(settings: Settings | None = None) -> MetaDB:
    db = MetaDB((settings or Settings()).resolved_database_url)
    (settings or Settings()).data_dir.mkdir(parents=True, exist_ok=True)
    db.migrate()
    return db


@contextmanager
def meta_session(immediate: bool = False) -> Iterator[Session]:
    """One metadata transaction; a refused operation prints its reason and exits 1."""
    try:
        with open_meta().session(immediate=immediate) as s:
            yield s
    except ExposedError as exc:
        errors.print(f"[red]error:[/] {exc.reason or exc.message}")
        raise typer.Exit(1) from None


def print_json(value: Any) -> None:
    typer.echo(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())


def table(*columns: str) -> Table:
    return Table(*columns, header_style="bold")


def _print_bootstrap(result: BootstrapResult, settings: Settings) -> None:
    console.print(f"[bold]Workspace[/]   default ({result.workspace_id})")
    console.print(f"[bold]Environment[/] prod ({result.environment_id})")
    console.print(f"[bold]Ingest key[/]  {result.ingest_key}")
    if result.admin_key:
        console.print(f"[bold]Admin key[/]   {result.admin_key}  [dim](shown once: keep it)[/]")
    else:
        console.print(
            f"[bold]Admin key[/]   {result.admin_key_display} [dim](shown only when created; "
            "make another with: limelight keys create --kind admin)[/]"
        )
    if result.admin_password:
        console.print(f"[bold]Admin user[/]  {result.admin_email}")
        console.print(
            f"[bold]Password[/]    {result.admin_password}  [dim](shown once: keep it)[/]"
        )
    else:
        console.print(
            f"[bold]Admin user[/]  {result.admin_email} [dim](password shown when created)[/]"
        )
    console.print(f"[bold]Console[/]     {settings.base_url}/")
    console.print(f"[bold]Events URL[/]  {settings.events_url}/v1/<dataset>")
    console.print(f"[bold]Queries URL[/] {settings.queries_url}/v1/queries")
    console.print(f"[bold]OAuth URL[/]   {settings.auth_url}/oauth")
    console.print(f"[bold]OTLP URL[/]    {settings.otel_url}/v1/traces")


@app.command()
def bootstrap(as_json: JsonFlag = False) -> None:
    """Ensure workspace 'default' with environment 'prod', an ingest key and an admin key."""
    settings = Settings()
    db = open_meta(settings)
    with db.session(immediate=True) as s:
        result = ensure_default(s, settings.redact_secrets)
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
        _print_bootstrap(result, settings)


@app.command()
def migrate() -> None:
    """Apply the metadata migrations (serve does this too)."""
    open_meta()
    console.print("metadata schema is up to date")


@app.command()
def serve(
    app_name: Annotated[
        str, typer.Option("--app", help="all; events or otel to serve that API alone at /")
    ] = "all",
    workers: Annotated[
        int, typer.Option(min=1, help="API processes on the one port (server mode only).")
    ] = 1,
) -> None:
    """Migrate, bootstrap an empty database, and serve on LIMELIGHT_HOST:LIMELIGHT_PORT."""
    from limelight.http_server import serve as serve_http

    settings = Settings()
    if workers > 1 and settings.events_backend == "chdb":
        errors.print(
            "[red]error:[/] --workers needs the server mode (LIMELIGHT_EVENTS_BACKEND=clickhouse"
            " and LIMELIGHT_DATABASE_URL on PostgreSQL): the embedded engine allows one process"
            " per data directory"
        )
        raise typer.Exit(2)
    db = open_meta(settings)
    with db.session(immediate=True) as s:
        fresh = not repos.list_workspaces(s)
        result = ensure_default(s, settings.redact_secrets) if fresh else None
    db.dispose()
    if result is not None:
        _print_bootstrap(result, settings)
    else:
        console.print(
            f"Serving on {settings.base_url} (events: {settings.events_url}/v1/<dataset>)"
        )
    if app_name not in ("all", "events", "otel"):
        raise typer.BadParameter("--app must be all, events or otel")
    serve_http(settings, app_name, workers)


@workspaces.command("create")
def workspaces_create(name: str, as_json: JsonFlag = False) -> None:
    """Create a workspace (names are unique)."""
    with meta_session(immediate=True) as s:
        ws = repos.create_workspace(s, name)
        if as_json:
            print_json({"workspaceId": ws.id, "name": ws.name})
        else:
            console.print(f"created workspace {ws.name} ({ws.id})")


@workspaces.command("list")
def workspaces_list(as_json: JsonFlag = False) -> None:
    with meta_session() as s:
        found = repos.list_workspaces(s)
        rows = [
            {"workspaceId": ws.id, "name": ws.name, "createdAt": _iso(ws.created_at)}
            for ws in found
        ]
    if as_json:
        print_json(rows)
        return
    t = table("id", "name", "created")
    for row in rows:
        t.add_row(row["workspaceId"], row["name"], row["createdAt"])
    console.print(t)


@environments.command("create")
def environments_create(
    name: str,
    workspace: Annotated[str, typer.Option(help="Workspace id or name.")] = "default",
    redact: Annotated[bool, typer.Option(help="Redact values of secret-looking keys.")] = True,
    as_json: JsonFlag = False,
) -> None:
    """Create an environment in a workspace (names are unique per workspace)."""
    with meta_session(immediate=True) as s:
        ws = repos.find_workspace(s, workspace)
        env = repos.create_environment(s, ws, name, redact)
        if as_json:
            print_json({"workspaceId": ws.id, "environmentId": env.id, "name": env.name,
                        "redactSecrets": env.redact_secrets})  # fmt: skip
        else:
            console.print(f"created environment {env.name} ({env.id}) in {ws.name}")


@environments.command("list")
def environments_list(
    workspace: Annotated[str | None, typer.Option(help="Workspace id or name.")] = None,
    as_json: JsonFlag = False,
) -> None:
    with meta_session() as s:
        ws = repos.find_workspace(s, workspace) if workspace else None
        rows: list[dict[str, Any]] = [
            {
                "environmentId": env.id,
                "workspaceId": env.workspace_id,
                "name": env.name,
                "redactSecrets": env.redact_secrets,
            }
            for env in repos.list_environments(s, ws)
        ]
    if as_json:
        print_json(rows)
        return
    t = table("id", "workspace", "name", "redact")
    for row in rows:
        redacts = "yes" if row["redactSecrets"] else "no"
        t.add_row(row["environmentId"], row["workspaceId"], row["name"], redacts)
    console.print(t)


@environments.command("redaction")
def environments_redaction(
    environment: Annotated[str, typer.Argument(help="Environment id or name.")],
    on: Annotated[bool, typer.Option("--on/--off", help="Redact secret-looking keys, or not.")],
    workspace: Annotated[str, typer.Option(help="Workspace id or name.")] = "default",
) -> None:
    """Turn redaction of secret-looking keys on or off; applies from the next request."""
    with meta_session(immediate=True) as s:
        env = repos.find_environment(s, environment, repos.find_workspace(s, workspace))
        env.redact_secrets = on
        console.print(f"redaction is {'on' if on else 'off'} for {env.name} ({env.id})")


@keys.command("create")
def keys_create(
    kind: Annotated[str, typer.Option(help="ingest (public) or admin.")] = "ingest",
    workspace: Annotated[str, typer.Option(help="Workspace id or name.")] = "default",
    environment: Annotated[str, typer.Option(help="Environment id or name.")] = "prod",
    name: Annotated[str, typer.Option(help="A label for the key.")] = "",
    user: Annotated[
        str | None,
        typer.Option(
            help="Admin keys: the user (id or email, a member of the workspace) the key acts"
            " for; default: the workspace's first member."
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Create a key bound to one environment. Admin keys are shown this once."""
    if kind not in KEY_KINDS:
        raise typer.BadParameter("--kind must be ingest or admin")
    if user is not None and kind != "admin":
        raise typer.BadParameter("--user names the owner of an admin key")
    with meta_session(immediate=True) as s:
        ws = repos.find_workspace(s, workspace)
        env = repos.find_environment(s, environment, ws)
        owner = admin_key_owner(s, ws, user) if kind == "admin" else None
        owner_id = owner.id if owner is not None else None
        new = mint_key(s, env, kind, name, user_id=owner_id)
        if as_json:
            print_json({"id": new.key.id, "kind": kind, "key": new.value, "workspaceId": ws.id,
                        "environmentId": env.id, "userId": owner_id})  # fmt: skip
        else:
            console.print(f"created {kind} key {new.key.id}: {new.value}")
            if owner is not None:
                console.print(f"it acts for {owner.email} (the author of what it saves)")
                console.print("[dim]admin keys are shown once: keep it[/]")


def _iso(at: datetime | None) -> str | None:
    # SQLite hands datetimes back without their zone; they are all UTC.
    if at is None:
        return None
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).isoformat()


def _key_row(k: ApiKey) -> dict[str, Any]:
    # Ingest keys are public and shown whole; an admin key only by its display form.
    return {
        "id": k.id,
        "environmentId": k.environment_id,
        "kind": k.kind,
        "name": k.name,
        "key": k.public_value,
        "display": k.display,
        "createdAt": _iso(k.created_at),
        "revokedAt": _iso(k.revoked_at),
    }


@keys.command("list")
def keys_list(
    workspace: Annotated[str | None, typer.Option(help="Workspace id or name.")] = None,
    environment: Annotated[str | None, typer.Option(help="Environment id or name.")] = None,
    as_json: JsonFlag = False,
) -> None:
    with meta_session() as s:
        ws = repos.find_workspace(s, workspace) if workspace else None
        env = repos.find_environment(s, environment, ws) if environment else None
        found = repos.list_keys(s, env)
        if ws is not None and env is None:
            in_ws = {e.id for e in repos.list_environments(s, ws)}
            found = [k for k in found if k.environment_id in in_ws]
        rows = [_key_row(k) for k in found]
    if as_json:
        print_json(rows)
        return
    t = table("id", "environment", "kind", "name", "key", "revoked")
    for row in rows:
        t.add_row(row["id"], row["environmentId"], row["kind"], row["name"],
                  row["key"] or row["display"], row["revokedAt"] or "")  # fmt: skip
    console.print(t)


@keys.command("revoke")
def keys_revoke(key_id: str, as_json: JsonFlag = False) -> None:
    """Revoke a key by id; it is refused from the next request on."""
    with meta_session(immediate=True) as s:
        key = repos.revoke_key(s, key_id)
        row = _key_row(key)
    if as_json:
        print_json(row)
    else:
        console.print(f"revoked key {key_id}")
