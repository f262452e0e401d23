"""``limelight users ...`` and ``limelight integrations ...``: the operator's side of accounts."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from sqlalchemy.orm import Session

from limelight.auth.oauth.logo import BadLogo, check_svg
from limelight.auth.oauth.redirects import check_registration
from limelight.auth.passwords import hash_password
from limelight.auth.secrets import SecretKind, display, hash_secret, new_secret
from limelight.cli.failures import BadUsage, Refused
from limelight.cli.installation import installation
from limelight.cli.output import (
    JsonFlag,
    note,
    print_fields,
    print_json,
    print_table,
    safe,
    say,
    when,
)
from limelight.store.meta import accounts_repo as accounts
from limelight.store.meta import oauth_repo, repos
from limelight.store.meta.accounts_models import Integration
from limelight.store.meta.models import utcnow

users = typer.Typer(no_args_is_help=True, help="Create and list users (developers).")
integrations = typer.Typer(no_args_is_help=True, help="Register and manage OAuth integrations.")

ClientId = Annotated[str, typer.Argument(help="The integration's Client ID.")]


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
    """Create a user who can log in to the console and install integrations."""
    if (password is None) == (not password_stdin):
        raise BadUsage("give exactly one of --password and --password-stdin")
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    assert password is not None
    password_hash = hash_password(password)
    with installation().session(immediate=True) as s:
        user = accounts.create_user(s, email, password_hash, utcnow())
        ws = repos.find_workspace(s, workspace) if workspace else None
        if ws is not None:
            accounts.add_member(s, user, ws, utcnow())
        row = {"userId": user.id, "email": user.email, "workspaceId": ws.id if ws else None,
               "createdAt": when(user.created_at)}  # fmt: skip
        where = f" in {ws.name}" if ws else ""
    if as_json:
        print_json(row)
    else:
        say(safe(f"created user {row['email']} ({row['userId']}){where}"))


@users.command("list")
def users_list(as_json: JsonFlag = False) -> None:
    """Every user, with the workspaces they are a member of."""
    with installation().session() as s:
        rows: list[dict[str, Any]] = [
            {
                "userId": u.id,
                "email": u.email,
                "workspaces": [ws.name for ws in accounts.workspaces_of(s, u.id)],
                "createdAt": when(u.created_at),
            }
            for u in accounts.list_users(s)
        ]
    if as_json:
        print_json(rows)
        return
    print_table(
        ["id", "email", "workspaces", "created"],
        [[r["userId"], r["email"], ", ".join(r["workspaces"]), r["createdAt"]] for r in rows],
    )


@users.command("set-password")
def users_set_password(
    user: Annotated[str, typer.Argument(help="User id or email.")],
    password_stdin: Annotated[
        bool,
        typer.Option(
            "--password-stdin",
            help="Read the password from standard input; else one is made and printed once.",
        ),
    ] = False,
) -> None:
    """Give a user a new password (a lost one included) and end their console sessions."""
    made = not password_stdin
    password = secrets.token_urlsafe(18) if made else sys.stdin.readline().rstrip("\r\n")
    password_hash = hash_password(password)
    with installation().session(immediate=True) as s:
        found = accounts.find_user(s, user)
        ended = accounts.set_password(s, found, password_hash)
        email = found.email
    say(safe(f"new password for {email}" + (f": {password}" if made else "")))
    if made:
        note("the password is shown once: keep it")
    if ended:
        note(f"ended {ended} console session{'s' if ended != 1 else ''} of {email}")


@users.command("add-to-workspace")
def users_add_to_workspace(
    user: Annotated[str, typer.Argument(help="User id or email.")],
    workspace: Annotated[str, typer.Argument(help="Workspace id or name.")],
) -> None:
    """Make a user a member of a workspace (they may then install integrations on it)."""
    with installation().session(immediate=True) as s:
        found = accounts.find_user(s, user)
        ws = repos.find_workspace(s, workspace)
        added = accounts.add_member(s, found, ws, utcnow())
        say(safe(f"{found.email} is {'now' if added else 'already'} a member of {ws.name}"))


# -- integrations -------------------------------------------------------------------------


def _integration_view(i: Integration, installs: int) -> dict[str, Any]:
    return {
        "clientId": i.id,
        "name": i.name,
        "description": i.description,
        "redirectUrl": i.redirect_url,
        "clientSecret": i.secret_display,  # the prefix and last 4 characters only
        "installations": installs,
        "createdAt": when(i.created_at),
    }


def _find(s: Session, client_id: str) -> Integration:
    integration = oauth_repo.get_integration(s, client_id)
    if integration is None:
        raise Refused(f"no integration with Client ID {client_id!r}")
    return integration


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
        raise BadUsage("--name needs 1 to 128 characters and --description 1 to 2000")
    if logo.suffix.lower() != ".svg":
        raise BadLogo("the logo must be an .svg file")
    try:
        svg = check_svg(logo.read_bytes())
    except OSError as exc:
        raise BadUsage(f"cannot read the logo {logo}: {exc.strerror}") from None
    redirect = check_registration(redirect_url)
    secret = new_secret(SecretKind.CLIENT_SECRET)
    with installation().session(immediate=True) as s:
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
        client_id = integration.id
    if as_json:
        print_json({"clientId": client_id, "clientSecret": secret, "name": name,
                    "redirectUrl": redirect})  # fmt: skip
        return
    print_fields(
        [
            ("Integration", name),
            ("Client ID", client_id),
            ("Client Secret", secret),
            ("Redirect URL", redirect),
        ]  # fmt: skip
    )
    note("the Client Secret is shown once: send it to the integration's owner")


@integrations.command("list")
def integrations_list(as_json: JsonFlag = False) -> None:
    """Every integration with its Client ID and how many installations are active."""
    with installation().session() as s:
        rows = [
            _integration_view(i, len(oauth_repo.active_installations(s, integration_id=i.id)))
            for i in oauth_repo.list_integrations(s)
        ]
    if as_json:
        print_json(rows)
        return
    print_table(
        ["client id", "name", "redirect url", "installations", "created"],
        [
            [r["clientId"], r["name"], r["redirectUrl"], r["installations"], r["createdAt"]]
            for r in rows
        ],  # fmt: skip
    )


@integrations.command("show")
def integrations_show(client_id: ClientId, as_json: JsonFlag = False) -> None:
    """An integration and its active installations (never its secret)."""
    with installation().session() as s:
        integration = _find(s, client_id)
        installs = oauth_repo.active_installations(s, integration_id=integration.id)
        view = _integration_view(integration, len(installs))
        view["installedBy"] = [
            {
                "installationId": inst.id,
                "user": user.email,
                "workspace": ws.name,
                "installedAt": when(inst.created_at),
            }  # fmt: skip
            for inst, _, ws, user in installs
        ]
    if as_json:
        print_json(view)
        return
    print_fields([(k, v) for k, v in view.items() if k != "installedBy"])
    if view["installedBy"]:
        say("")
        print_table(
            ["installation", "user", "workspace", "installed"],
            [list(entry.values()) for entry in view["installedBy"]],
        )


@integrations.command("delete")
def integrations_delete(client_id: ClientId) -> None:
    """Delete an integration: its tokens and the keys made for it stop working at once."""
    with installation().session(immediate=True) as s:
        removed = oauth_repo.delete_integration(s, _find(s, client_id), utcnow())
    say(safe(f"deleted integration {client_id} ({removed} active installations revoked)"))


@integrations.command("rotate-secret")
def integrations_rotate_secret(client_id: ClientId, as_json: JsonFlag = False) -> None:
    """A new Client Secret; the old one and every token issued so far stop working at once."""
    secret = new_secret(SecretKind.CLIENT_SECRET)
    with installation().session(immediate=True) as s:
        revoked = oauth_repo.replace_secret(
            s, _find(s, client_id), hash_secret(secret), display(secret), utcnow()
        )
    if as_json:
        print_json({"clientId": client_id, "clientSecret": secret, "tokensRevoked": revoked})
        return
    print_fields([("Client Secret", secret)])
    note("shown once")
    say(f"{revoked} tokens revoked; installations and their keys are kept")


@integrations.command("uninstall")
def integrations_uninstall(
    client_id: ClientId,
    user: Annotated[str | None, typer.Option(help="Only this user's installations.")] = None,
    workspace: Annotated[str | None, typer.Option(help="Only installations on it.")] = None,
) -> None:
    """Revoke installations of an integration: their tokens and keys stop working at once."""
    with installation().session(immediate=True) as s:
        integration = _find(s, client_id)
        user_id = accounts.find_user(s, user).id if user else None
        ws_id = repos.find_workspace(s, workspace).id if workspace else None
        installs = oauth_repo.active_installations(
            s, integration_id=integration.id, user_id=user_id, workspace_id=ws_id
        )
        for inst, *_ in installs:
            oauth_repo.revoke_installation(s, inst.id, utcnow())
    say(safe(f"uninstalled {len(installs)} installation(s) of {client_id}"))
