"""``limelight workspaces|environments|keys ...``: who sends and reads events."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer

from limelight.auth.api_keys import mint_key
from limelight.auth.key_owners import admin_key_owner
from limelight.cli.installation import installation
from limelight.cli.output import JsonFlag, note, print_json, print_table, safe, say, when
from limelight.store.meta import repos
from limelight.store.meta.models import ApiKey

workspaces = typer.Typer(no_args_is_help=True, help="Create and list workspaces.")
environments = typer.Typer(no_args_is_help=True, help="Create, list and change environments.")
keys = typer.Typer(no_args_is_help=True, help="Create, list and revoke API keys.")

WorkspaceOption = Annotated[str, typer.Option(help="Workspace id or name.")]
EnvironmentOption = Annotated[str, typer.Option(help="Environment id or name.")]


@workspaces.command("create")
def workspaces_create(
    name: Annotated[str, typer.Argument(help="The workspace's name (unique).")],
    as_json: JsonFlag = False,
) -> None:
    """Create a workspace (names are unique)."""
    with installation().session(immediate=True) as s:
        ws = repos.create_workspace(s, name)
        row = {"workspaceId": ws.id, "name": ws.name, "createdAt": when(ws.created_at)}
    if as_json:
        print_json(row)
    else:
        say(safe(f"created workspace {row['name']} ({row['workspaceId']})"))


@workspaces.command("list")
def workspaces_list(as_json: JsonFlag = False) -> None:
    """Every workspace, oldest first."""
    with installation().session() as s:
        rows = [
            {"workspaceId": ws.id, "name": ws.name, "createdAt": when(ws.created_at)}
            for ws in repos.list_workspaces(s)
        ]
    if as_json:
        print_json(rows)
        return
    print_table(["id", "name", "created"], [list(r.values()) for r in rows])


@environments.command("create")
def environments_create(
    name: Annotated[str, typer.Argument(help="The environment's name (unique per workspace).")],
    workspace: WorkspaceOption = "default",
    redact: Annotated[bool, typer.Option(help="Redact values of secret-looking keys.")] = True,
    as_json: JsonFlag = False,
) -> None:
    """Create an environment in a workspace (names are unique per workspace)."""
    with installation().session(immediate=True) as s:
        ws = repos.find_workspace(s, workspace)
        env = repos.create_environment(s, ws, name, redact)
        row = {"workspaceId": ws.id, "environmentId": env.id, "name": env.name,
               "redactSecrets": env.redact_secrets}  # fmt: skip
        ws_name = ws.name
    if as_json:
        print_json(row)
    else:
        say(safe(f"created environment {row['name']} ({row['environmentId']}) in {ws_name}"))


@environments.command("list")
def environments_list(
    workspace: Annotated[str | None, typer.Option(help="Only this workspace (id or name).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Environments of every workspace, or of one."""
    with installation().session() as s:
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
    print_table(["id", "workspace", "name", "redact"], [list(r.values()) for r in rows])


@environments.command("redaction")
def environments_redaction(
    environment: Annotated[str, typer.Argument(help="Environment id or name.")],
    on: Annotated[bool, typer.Option("--on/--off", help="Redact secret-looking keys, or not.")],
    workspace: WorkspaceOption = "default",
) -> None:
    """Turn redaction of secret-looking keys on or off; applies from the next request."""
    with installation().session(immediate=True) as s:
        env = repos.find_environment(s, environment, repos.find_workspace(s, workspace))
        env.redact_secrets = on
        say(safe(f"redaction is {'on' if on else 'off'} for {env.name} ({env.id})"))


def _key_row(k: ApiKey) -> dict[str, Any]:
    # Ingest keys are public and shown whole; an admin key only by its display form.
    return {
        "id": k.id,
        "environmentId": k.environment_id,
        "kind": k.kind,
        "name": k.name,
        "key": k.public_value,
        "display": k.display,
        "createdAt": when(k.created_at),
        "revokedAt": when(k.revoked_at),
    }


@keys.command("create")
def keys_create(
    kind: Annotated[
        Literal["ingest", "admin"],
        typer.Option(help="ingest (public: it can only send events) or admin."),
    ] = "ingest",
    workspace: WorkspaceOption = "default",
    environment: EnvironmentOption = "prod",
    name: Annotated[str, typer.Option(help="A label for the key.")] = "",
    user: Annotated[
        str | None,
        typer.Option(
            help="Admin keys: the user (id or email, a member of the workspace) the key acts"
            " for; default: the workspace's first member."
        ),
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print the key alone (for KEY=$(...)).")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Create a key bound to one environment. Admin keys are shown this once."""
    if user is not None and kind != "admin":
        raise typer.BadParameter("--user names the owner of an admin key", param_hint="--user")
    with installation().session(immediate=True) as s:
        ws = repos.find_workspace(s, workspace)
        env = repos.find_environment(s, environment, ws)
        owner = admin_key_owner(s, ws, user) if kind == "admin" else None
        new = mint_key(s, env, kind, name, user_id=owner.id if owner else None)
        row = {"id": new.key.id, "kind": kind, "key": new.value, "workspaceId": ws.id,
               "environmentId": env.id, "userId": owner.id if owner else None}  # fmt: skip
        owner_email = owner.email if owner else None
    if as_json:
        print_json(row)
    elif quiet:
        typer.echo(new.value)
    else:
        say(f"created {kind} key {row['id']}: {new.value}")
        if owner_email is not None:
            say(safe(f"it acts for {owner_email} (the author of what it saves)"))
            note("admin keys are shown once: keep it")


@keys.command("list")
def keys_list(
    workspace: Annotated[str | None, typer.Option(help="Only this workspace (id or name).")] = None,
    environment: Annotated[
        str | None, typer.Option(help="Only this environment (id or name).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """API keys: ingest keys whole (they are public), admin keys by their display form."""
    with installation().session() as s:
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
    print_table(
        ["id", "environment", "kind", "name", "key", "created", "revoked"],
        [
            [
                r["id"],
                r["environmentId"],
                r["kind"],
                r["name"],
                r["key"] or r["display"],
                r["createdAt"],
                r["revokedAt"],
            ]  # fmt: skip
            for r in rows
        ],
    )


@keys.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (see keys list).")],
    as_json: JsonFlag = False,
) -> None:
    """Revoke a key by id; it is refused from the next request on."""
    with installation().session(immediate=True) as s:
        row = _key_row(repos.revoke_key(s, key_id))
    if as_json:
        print_json(row)
    else:
        say(safe(f"revoked key {key_id}"))
