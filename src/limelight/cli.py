"""The ``limelight`` command: serve, bootstrap, and the operator's sub-commands.

Commands other than ``serve`` touch only the metadata database, so they can
run while a server holds the events engine.
"""

from __future__ import annotations

from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.table import Table

from limelight.bootstrap import BootstrapResult, ensure_default
from limelight.cli_accounts import integrations, users
from limelight.settings import Settings
from limelight.store.meta import repos
from limelight.store.meta.db import MetaDB

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

console = Console()

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


def open_meta(settings: Settings | None = None) -> MetaDB:
    db = MetaDB((settings or Settings()).resolved_database_url)
    (settings or Settings()).data_dir.mkdir(parents=True, exist_ok=True)
    db.migrate()
    return db


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
) -> None:
    """Migrate, bootstrap an empty database, and serve on LIMELIGHT_HOST:LIMELIGHT_PORT."""
    import uvicorn

    from limelight.app import create_named_app

    settings = Settings()
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
    uvicorn.run(
        create_named_app(settings, app_name),  # type: ignore[arg-type]
        host=settings.host,
        port=settings.port,
        access_log=False,
        log_level="warning",
    )


@workspaces.command("create")
def workspaces_create(name: str, as_json: JsonFlag = False) -> None:
    with open_meta().session(immediate=True) as s:
        ws = repos.create_workspace(s, name)
        if as_json:
            print_json({"workspaceId": ws.id, "name": ws.name})
        else:
            console.print(f"created workspace {ws.name} ({ws.id})")


@workspaces.command("list")
def workspaces_list() -> None:
    t = table("id", "name", "created")
    with open_meta().session() as s:
        for ws in repos.list_workspaces(s):
            t.add_row(ws.id, ws.name, ws.created_at.isoformat())
    console.print(t)


@environments.command("create")
def environments_create(
    name: str,
    workspace: Annotated[str, typer.Option(help="Workspace id or name.")] = "default",
    redact: Annotated[bool, typer.Option(help="Redact values of secret-looking keys.")] = True,
    as_json: JsonFlag = False,
) -> None:
    with open_meta().session(immediate=True) as s:
        ws = repos.find_workspace(s, workspace)
        env = repos.create_environment(s, ws, name, redact)
        if as_json:
            print_json({"workspaceId": ws.id, "environmentId": env.id, "name": env.name})
        else:
            console.print(f"created environment {env.name} ({env.id}) in {ws.name}")


@environments.command("list")
def environments_list(
    workspace: Annotated[str | None, typer.Option(help="Workspace id or name.")] = None,
) -> None:
    t = table("id", "workspace", "name", "redact")
    with open_meta().session() as s:
        ws = repos.find_workspace(s, workspace) if workspace else None
        for env in repos.list_environments(s, ws):
            t.add_row(env.id, env.workspace_id, env.name, "yes" if env.redact_secrets else "no")
    console.print(t)


@keys.command("create")
def keys_create(
    kind: Annotated[str, typer.Option(help="ingest (public) or admin.")] = "ingest",
    workspace: Annotated[str, typer.Option(help="Workspace id or name.")] = "default",
    environment: Annotated[str, typer.Option(help="Environment id or name.")] = "prod",
    name: Annotated[str, typer.Option(help="A label for the key.")] = "",
    as_json: JsonFlag = False,
) -> None:
    if kind not in repos.KEY_KINDS:
        raise typer.BadParameter("--kind must be ingest or admin")
    with open_meta().session(immediate=True) as s:
        ws = repos.find_workspace(s, workspace)
        env = repos.find_environment(s, environment, ws)
        new = repos.create_key(s, env, kind, name)
        if as_json:
            print_json({"id": new.key.id, "kind": kind, "key": new.value,
                        "workspaceId": ws.id, "environmentId": env.id})  # fmt: skip
        else:
            console.print(f"created {kind} key {new.key.id}: {new.value}")
            if kind == "admin":
                console.print("[dim]admin keys are shown once: keep it[/]")


@keys.command("list")
def keys_list(
    workspace: Annotated[str | None, typer.Option(help="Workspace id or name.")] = None,
    environment: Annotated[str | None, typer.Option(help="Environment id or name.")] = None,
) -> None:
    t = table("id", "environment", "kind", "name", "key", "revoked")
    with open_meta().session() as s:
        ws = repos.find_workspace(s, workspace) if workspace else None
        env = repos.find_environment(s, environment, ws) if environment else None
        for k in repos.list_keys(s, env):
            shown = k.public_value or k.display
            revoked = k.revoked_at.isoformat() if k.revoked_at else ""
            t.add_row(k.id, k.environment_id, k.kind, k.name, shown, revoked)
    console.print(t)


@keys.command("revoke")
def keys_revoke(key_id: str) -> None:
    """Revoke a key by id; it is refused from the next request on."""
    with open_meta().session(immediate=True) as s:
        repos.revoke_key(s, key_id)
    console.print(f"revoked key {key_id}")


def main() -> None:
    app()
