"""``limelight plan``, ``apply`` and ``pull``: a folder of resources against a server.

``plan`` exits 0 when the environment matches the folder, 2 when applying would
change something (so CI can tell), 1 when the folder is refused. Every command
here works over the server's HTTP API (``remote``); the folder is read and
checked whole before the first request that changes anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn
from urllib.parse import quote

import typer

from limelight.cli.failures import ExitCode, Refused
from limelight.cli.output import safe, say
from limelight.cli.remote import ProfileOption, Server, UrlOption, object_of, objects_of, target

if TYPE_CHECKING:
    from limelight.ascode.folder import Folder
    from limelight.ascode.planning import Change, Plan, Stored
    from limelight.ascode.problems import Problem

FolderArg = Annotated[Path, typer.Argument(help="The folder of YAML files.")]
PruneFlag = Annotated[
    bool,
    typer.Option("--prune", help="Also delete what an apply created and the folder "
                 "no longer declares."),
]  # fmt: skip
PLURAL = {"query": "queries", "alert": "alerts", "board": "boards"}
SIGNS = {"create": ("+", "green"), "update": ("~", "yellow"), "delete": ("-", "red")}


def _read(folder: Path) -> Folder:
    from limelight.ascode.folder import read_folder
    from limelight.ascode.problems import FolderRefused

    try:
        return read_folder(folder)
    except FolderRefused as exc:
        _refuse(folder, exc.problems)


def _refuse(folder: Path, problems: list[Problem]) -> NoReturn:
    from limelight.cli.failures import print_error

    for problem in problems:
        print_error(str(problem))
    raise Refused(f"{folder} is refused ({len(problems)} problems); nothing was changed")


def _by_id(server: Server, plural: str) -> dict[str, dict[str, Any]]:
    listed = objects_of(server.call("GET", f"/v1/{plural}"), plural, plural)
    if not all(isinstance(r.get("id"), str) for r in listed):
        raise Refused(f"{plural}: unexpected answer: one without an id")
    return {r["id"]: r for r in listed}


def _stored(server: Server) -> Stored:
    from limelight.ascode.planning import Stored

    resources: dict[Any, dict[str, dict[str, Any]]] = {
        kind: _by_id(server, PLURAL[kind]) for kind in ("query", "alert")
    }
    supported = server.send("GET", "/v1/boards").status_code != 404
    resources["board"] = _by_id(server, "boards") if supported else {}
    listed = objects_of(server.call("GET", "/v1/managed"), "managed", "managed")
    fields = ("type", "managed_id", "id")
    if not all(isinstance(m.get(f), str) for m in listed for f in fields):
        raise Refused("managed: unexpected answer: one without its type and ids")
    managed = {(m["type"], m["managed_id"]): m["id"] for m in listed}
    return Stored(resources, managed, supported)


def _json(value: Any) -> str:
    import orjson

    # JSON escapes control characters: nothing a tenant wrote reaches the terminal raw.
    return orjson.dumps(value).decode()


def print_plan(plan: Plan) -> None:
    # Ids and names may come from the server (what it manages, its resources' ids): each
    # goes through safe(), so no answer can move the cursor over a line of the plan.
    for change in plan.changes:
        sign, colour = SIGNS[change.action]
        where = f" ({safe(change.resource_id)})" if change.resource_id else ""
        say(f"[{colour}]{sign} {change.kind} {safe(change.id)}[/]{where}")
        if change.action == "delete":
            continue
        for name in change.fields():
            before, after = (change.before or {}).get(name), (change.after or {}).get(name)
            if change.action == "update" and name in (change.before or {}):
                say(f"    [red]- {safe(name)}: {safe(_json(before))}[/]")
            if after is not None:
                say(f"    [green]+ {safe(name)}: {safe(_json(after))}[/]")
    for kind, mid, rid in plan.kept:
        say(
            f"[dim]  {safe(kind)} {safe(mid)} ({safe(rid)}): no longer in the folder,"
            " kept (--prune deletes it)[/]"
        )
    if not plan.changes:
        say("No changes: the environment matches the folder.")
        return
    say(
        f"Plan: {plan.count('create')} to create, {plan.count('update')} to change, "
        f"{plan.count('delete')} to delete."
    )


def _planned(
    folder: Path, url: str | None, profile: str | None, prune: bool
) -> tuple[Folder, Plan, Server]:
    from limelight.ascode.folder import line_problems
    from limelight.ascode.planning import plan

    declared = _read(folder)
    server = Server(target(url, profile))
    stored = _stored(server)
    if declared.of("board") and not stored.boards_supported:
        server.__exit__()
        raise Refused(f"{server.url} has no Boards API: the folder's boards cannot be applied")
    if problems := line_problems(declared, stored.resource):
        server.__exit__()
        _refuse(folder, problems)
    planned = plan(declared, stored, prune)
    if planned.blocked:
        server.__exit__()
        raise Refused("; ".join(planned.blocked) + "; nothing was changed")
    return declared, planned, server


def plan_command(
    folder: FolderArg,
    url: UrlOption = None,
    profile: ProfileOption = None,
    prune: PruneFlag = False,
) -> None:
    """Print what applying the folder would create, change and delete.

    Exits 0 when there is nothing to do, 2 when there are changes, 1 when the folder is refused."""
    _, planned, server = _planned(folder, url, profile, prune)
    server.__exit__()
    print_plan(planned)
    if planned.changes:
        raise typer.Exit(ExitCode.USAGE)


def _body(change: Change, ids: dict[Any, str]) -> dict[str, Any]:
    from limelight.ascode.canonical import alert_body

    after = change.after or {}
    if change.kind == "alert":
        return alert_body(after, ids[("query", after["query"])])
    if change.kind == "board":
        panels = [
            {**{k: v for k, v in p.items() if k != "query"}, "query_id": ids[("query", p["query"])]}
            for p in after.get("panels", [])
        ]
        return {**after, "panels": panels}
    # A query's update sends the fields the folder no longer sets as null: cleared.
    return {**{k: None for k in change.before or {} if k not in after}, **after}


def _apply_one(server: Server, change: Change, ids: dict[Any, str]) -> None:
    plural = PLURAL[change.kind]
    if change.action == "delete":
        server.call("DELETE", f"/v1/{plural}/{quote(str(change.resource_id), safe='')}")
        say(f"deleted {change.kind} {safe(change.id)} ({safe(str(change.resource_id))})")
        return
    body = _body(change, ids)
    if change.action == "update":
        server.call("PUT", f"/v1/{plural}/{quote(str(change.resource_id), safe='')}", json=body)
        say(f"changed {change.kind} {safe(change.id)} ({safe(str(change.resource_id))})")
        return
    created = server.call("POST", f"/v1/{plural}", params={"managed_id": change.id}, json=body)
    made = object_of(created, change.kind, plural)
    if not isinstance(made.get("id"), str):
        raise Refused(f"{plural}: unexpected answer: the {change.kind} made has no id")
    ids[(change.kind, change.id)] = made["id"]
    say(f"created {change.kind} {safe(change.id)} ({safe(made['id'])})")
    if made.get("webhook_secret"):
        secret = safe(str(made["webhook_secret"]))
        say(f"  webhook secret (shown once, to check its signatures): {secret}")


def apply_command(
    folder: FolderArg,
    url: UrlOption = None,
    profile: ProfileOption = None,
    prune: PruneFlag = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Apply without asking.")] = False,
) -> None:
    """Make the environment match the folder of resources.

    Creates and changes its resources; with --prune, also deletes what an apply created
    that the folder no longer declares."""
    _, planned, server = _planned(folder, url, profile, prune)
    with server:
        print_plan(planned)
        if not planned.changes:
            return
        if not yes and not typer.confirm("Apply these changes?"):
            raise Refused("not applied")
        ids = dict(planned.ids)
        for done, change in enumerate(planned.changes):
            try:
                _apply_one(server, change, ids)
            except Refused as exc:
                raise Refused(
                    f"{change.action} {change.kind} {change.id}: {exc.message} "
                    f"({done} of {len(planned.changes)} changes applied before it; "
                    "limelight plan shows what is left)"
                ) from None
        say(
            f"Applied: {planned.count('create')} created, {planned.count('update')} changed, "
            f"{planned.count('delete')} deleted."
        )


def pull_command(folder: FolderArg, url: UrlOption = None, profile: ProfileOption = None) -> None:
    """Write the environment's queries, alerts and boards as files of a new folder.

    The files plan back to no change. The folder must be new or empty."""
    from limelight.ascode.pulling import files_of

    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise Refused(f"{folder} is not an empty folder: pull writes a new folder")
    with Server(target(url, profile)) as server:
        written = files_of(_stored(server), server.url)
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in written.items():
        (folder / name).write_text(text, encoding="utf-8")
        say(f"wrote {folder / name}")
    if not written:
        say("The environment holds no queries, alerts or boards.")
