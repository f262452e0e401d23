"""``limelight users ...`` and ``limelight integrations ...``: the operator's side of accounts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.table import Table

from limelight.auth.oauth.logo import BadLogo, check_svg
from limelight.auth.oauth.redirects import BadRedirect, check_registration
from limelight.auth.passwords import WeakPassword, hash_password
from limelight.auth.secrets import SecretKind, display, hash_secret, new_secret
from limelight.errors import ExposedError
from limelight.settings import Settings
from limelight.store.meta import accounts_repo as accounts
from limelight.store.meta import oauth_repo, repos
from limelight.store.meta.accounts_models import Integration
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow

users = typer.Typer(no_args_is_help=True, help="Create and list users (developers).")
integrations = typer.Typer(no_args_is_help=True, help="Register and manage OAuth integrations.")
console = Console()

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


def _meta() -> MetaDB:
    settings = Settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    db = MetaDB(settings.resolved_database_url)
    db.migrate()
    return db


def _print_json(value: Any) -> None:
    typer.echo(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


# -- users --------------------------------------------------------------------------------


@users.command("create")
def users_create(
    email: Annotated[str, typer.Option(help="The user's email (their login).")],
    password: Annotated[
        str | None, typer.Option(help="The password (visible in shell history: prefer stdin).")
    ] = None,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from standard input.")
    ] = False,
    workspace: Annotated[
        str | None, typer.Option(help="Also make the user a member of this workspace (id/name).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    if (password is None) == (not password_stdin):
        raise _fail("give exactly one of --password and --password-stdin")
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    assert password is not None
    try:
        password_hash = hash_password(password)
        with _meta().session(immediate=True) as s:
            user = accounts.create_user(s, email, password_hash, utcnow())
            ws = repos.find_workspace(s, workspace) if workspace else None
            if ws is not None:
                accounts.add_member(s, user, ws, utcnow())
    except (WeakPassword, ExposedError) as exc:
        raise _fail(str(exc)) from exc
    if as_json:
        _print_json({"userId": user.id, "email": user.email, "workspaceId": ws and ws.id})
    else:
        console.print(f"created user {user.email} ({user.id})" + (f" in {ws.name}" if ws else ""))


@users.command("list")
def users_list(as_json: JsonFlag = False) -> None:
    with _meta().session() as s:
        rows = [
            (u, [ws.name for ws in accounts.workspaces_of(s, u.id)]) for u in accounts.list_users(s)
        ]
    if as_json:
        _print_json([{"userId": u.id, "email": u.email, "workspaces": w} for u, w in rows])
        return
    t = Table("id", "email", "workspaces", "created", header_style="bold")
    for u, names in rows:
        t.add_row(u.id, u.email, ", ".join(names), u.created_at.isoformat())
    console.print(t)


@users.command("add-to-workspace")
def users_add_to_workspace(
    user: Annotated[str, typer.Argument(help="User id or email.")],
    workspace: Annotated[str, typer.Argument(help="Workspace id or name.")],
) -> None:
    try:
        with _meta().session(immediate=True) as s:
            found = accounts.find_user(s, user)
            ws = repos.find_workspace(s, workspace)
            added = accounts.add_member(s, found, ws, utcnow())
    except ExposedError as exc:
        raise _fail(str(exc)) from exc
    console.print(f"{found.email} is {'now' if added else 'already'} a member of {ws.name}")


# -- integrations -------------------------------------------------------------------------


def _integration_view(i: Integration, installs: int) -> dict[str, Any]:
    return {
        "clientId": i.id,
        "name": i.name,
        "description": i.description,
        "redirectUrl": i.redirect_url,
        "clientSecret": i.secret_display,  # the prefix and last 4 characters only
        "installations": installs,
        "createdAt": i.created_at.isoformat(),
    }


@integrations.command("create")
def integrations_create(
    name: Annotated[str, typer.Option(help="The application's name, shown on the consent page.")],
    description: Annotated[str, typer.Option(help="A short description of the application.")],
    logo: Annotated[Path, typer.Option(help="The application's icon, an .svg file.")],
    redirect_url: Annotated[
        str, typer.Option(help="Where developers are sent after installing (exact match).")
    ],
    as_json: JsonFlag = False,
) -> None:
    """Register an integration; prints its Client ID and Client Secret (the secret only now)."""
    name, description = name.strip(), description.strip()
    if not 1 <= len(name) <= 128 or not 1 <= len(description) <= 2000:
        raise _fail("--name needs 1 to 128 characters and --description 1 to 2000")
    try:
        if logo.suffix.lower() != ".svg":
            raise BadLogo("the logo must be an .svg file")
        svg = check_svg(logo.read_bytes())
        redirect = check_registration(redirect_url)
    except (BadLogo, BadRedirect, OSError) as exc:
        raise _fail(str(exc)) from exc
    secret = new_secret(SecretKind.CLIENT_SECRET)
    with _meta().session(immediate=True) as s:
        integration = oauth_repo.create_integration(
            s,
            name=name,
            description=description,
            logo_svg=svg,
            redirect_url=redirect,
            secret_hash=hash_secret(secret),
            secret_display=display(secret),
            now=utcnow(),
        )
    if as_json:
        _print_json({"clientId": integration.id, "clientSecret": secret, "name": name,
                     "redirectUrl": redirect})  # fmt: skip
        return
    console.print(f"[bold]Integration[/]   {name}")
    console.print(f"[bold]Client ID[/]     {integration.id}")
    console.print(f"[bold]Client Secret[/] {secret}  [dim](shown once: send it to the owner)[/]")
    console.print(f"[bold]Redirect URL[/]  {redirect}")


@integrations.command("list")
def integrations_list(as_json: JsonFlag = False) -> None:
    with _meta().session() as s:
        rows = [
            _integration_view(i, len(oauth_repo.active_installations(s, integration_id=i.id)))
            for i in oauth_repo.list_integrations(s)
        ]
    if as_json:
        _print_json(rows)
        return
    t = Table("client id", "name", "redirect url", "installations", header_style="bold")
    for r in rows:
        t.add_row(r["clientId"], r["name"], r["redirectUrl"], str(r["installations"]))
    console.print(t)


def _find(s: Any, client_id: str) -> Integration:
    integration = oauth_repo.get_integration(s, client_id)
    if integration is None:
        raise _fail(f"no integration with Client ID {client_id!r}")
    return integration


@integrations.command("show")
def integrations_show(client_id: str, as_json: JsonFlag = False) -> None:
    with _meta().session() as s:
        integration = _find(s, client_id)
        installs = oauth_repo.active_installations(s, integration_id=integration.id)
        view = _integration_view(integration, len(installs))
        view["installedBy"] = [
            {"installationId": inst.id, "user": user.email, "workspace": ws.name}
            for inst, _, ws, user in installs
        ]
    if as_json:
        _print_json(view)
        return
    for key, value in view.items():
        if key != "installedBy":
            console.print(f"[bold]{key}[/] {value}")
    for entry in view["installedBy"]:
        console.print(f"  installed by {entry['user']} on {entry['workspace']}")


@integrations.command("delete")
def integrations_delete(client_id: str) -> None:
    """Delete an integration: its tokens and the keys made for it stop working at once."""
    with _meta().session(immediate=True) as s:
        removed = oauth_repo.delete_integration(s, _find(s, client_id), utcnow())
    console.print(f"deleted integration {client_id} ({removed} installations revoked)")


@integrations.command("rotate-secret")
def integrations_rotate_secret(client_id: str, as_json: JsonFlag = False) -> None:
    """A new Client Secret; the old one and every token issued so far stop working at once."""
    secret = new_secret(SecretKind.CLIENT_SECRET)
    with _meta().session(immediate=True) as s:
        revoked = oauth_repo.replace_secret(
            s, _find(s, client_id), hash_secret(secret), display(secret), utcnow()
        )
    if as_json:
        _print_json({"clientId": client_id, "clientSecret": secret, "tokensRevoked": revoked})
        return
    console.print(f"[bold]Client Secret[/] {secret}  [dim](shown once)[/]")
    console.print(f"{revoked} tokens revoked; installations and their keys are kept")


@integrations.command("uninstall")
def integrations_uninstall(
    client_id: str,
    user: Annotated[str | None, typer.Option(help="Only this user's installations.")] = None,
    workspace: Annotated[str | None, typer.Option(help="Only installations on it.")] = None,
) -> None:
    """Revoke installations of an integration: their tokens and keys stop working at once."""
    try:
        with _meta().session(immediate=True) as s:
            integration = _find(s, client_id)
            user_id = accounts.find_user(s, user).id if user else None
            ws_id = repos.find_workspace(s, workspace).id if workspace else None
            installs = oauth_repo.active_installations(
                s, integration_id=integration.id, user_id=user_id, workspace_id=ws_id
            )
            for inst, *_ in installs:
                oauth_repo.revoke_installation(s, inst.id, utcnow())
    except ExposedError as exc:
        raise _fail(str(exc)) from exc
    console.print(f"uninstalled {len(installs)} installation(s) of {client_id}")
