"""What applying a folder would change in an environment: each resource created, changed or
deleted, with the fields that differ.

A declared resource is the environment's resource of its kind recorded under
its id by an earlier apply (``GET /v1/managed``), or else the one whose own id
it is (a folder written by ``pull`` names what no apply created by its id).
What an apply created and the folder no longer declares is deleted only with
``prune``; anything else the environment holds is never touched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from limelight.ascode.canonical import query_form, stored_alert_form
from limelight.ascode.folder import Folder
from limelight.ascode.resources import KINDS, Kind

Action = Literal["create", "update", "delete"]
# Deletions go last and in this order: what refers to a query before the query.
DELETE_ORDER: tuple[Kind, ...] = ("board", "alert", "query")


@dataclass
class Stored:
    """What an environment holds, as its API lists it."""

    resources: dict[Kind, dict[str, dict[str, Any]]]  # by kind, then id
    managed: dict[tuple[Kind, str], str]  # (kind, managed id) -> id
    boards_supported: bool = True

    def names(self, kind: Kind) -> dict[str, str]:
        """Each resource's id in a folder: its managed id, else its own id."""
        named = {rid: rid for rid in self.resources.get(kind, {})}
        named.update({rid: mid for (k, mid), rid in self.managed.items() if k == kind})
        return named

    def id_of(self, kind: Kind, folder_id: str) -> str | None:
        """The id of the resource a folder's id names here: the one an apply recorded
        under it, else the one whose own id it is."""
        held = self.resources.get(kind, {})
        return self.managed.get((kind, folder_id)) or (folder_id if folder_id in held else None)

    def resource(self, kind: Kind, folder_id: str) -> dict[str, Any] | None:
        """The resource a folder's id names here, as the API lists it; None for a new one."""
        found = self.id_of(kind, folder_id)
        return self.resources[kind][found] if found is not None else None

    def form(self, kind: Kind, rid: str) -> dict[str, Any]:
        found = self.resources[kind][rid]
        if kind == "query":
            return query_form(found)
        if kind == "alert":
            return stored_alert_form(found, self.names("query"))
        return board_form(found, self.names("query"))


PANEL_DEFAULTS = {"title": "", "visualization": "line", "width": 2}


def _panel(query: str, panel: Mapping[str, Any]) -> dict[str, Any]:
    filled = {k: panel.get(k) if panel.get(k) is not None else v for k, v in PANEL_DEFAULTS.items()}
    return {"query": query, **filled}


def board_form(board: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """A board of the Boards API in a folder's form (its panels' queries by their folder id,
    every default filled)."""
    return {
        "name": board["name"],
        "description": board.get("description") or None,
        "panels": [
            _panel(names.get(p["query_id"], p["query_id"]), p) for p in board.get("panels", [])
        ],
    }


def board_file_form(form: Mapping[str, Any]) -> dict[str, Any]:
    """A board as a file declares it: defaults left out."""
    out: dict[str, Any] = {"name": form["name"]}
    if form.get("description"):
        out["description"] = form["description"]
    out["panels"] = [
        {k: v for k, v in p.items() if k == "query" or PANEL_DEFAULTS.get(k) != v}
        for p in form["panels"]
    ]
    return out


@dataclass(frozen=True)
class Change:
    action: Action
    kind: Kind
    id: str  # in the folder
    resource_id: str | None  # in the environment (None until created)
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    def fields(self) -> list[str]:
        """The fields that differ, in the order they are written."""
        before, after = self.before or {}, self.after or {}
        names = list(after) + [k for k in before if k not in after]
        return [k for k in names if before.get(k) != after.get(k)]


@dataclass
class Plan:
    changes: list[Change] = field(default_factory=list)
    # Created by an apply, no longer declared, kept because --prune was not given.
    kept: list[tuple[Kind, str, str]] = field(default_factory=list)
    # The environment's id of each declared resource that exists already.
    ids: dict[tuple[Kind, str], str] = field(default_factory=dict)
    # Deletions the server would refuse (a query still used by what stays), said up front.
    blocked: list[str] = field(default_factory=list)

    def count(self, action: Action) -> int:
        return sum(1 for c in self.changes if c.action == action)


def _board_form(form: Mapping[str, Any], rid: str) -> dict[str, Any]:
    return {
        "name": form.get("name") or rid,
        "description": form.get("description") or None,
        "panels": [_panel(p["query"], p) for p in form.get("panels", [])],
    }


def desired(folder: Folder, kind: Kind, rid: str) -> dict[str, Any]:
    form = folder.forms[(kind, rid)]
    return _board_form(form, rid) if kind == "board" else form


def plan(folder: Folder, stored: Stored, prune: bool) -> Plan:
    out = Plan()
    for kind in KINDS:
        for rid in folder.of(kind):
            after = desired(folder, kind, rid)
            found = stored.id_of(kind, rid)
            if found is not None:
                out.ids[(kind, rid)] = found
            if found is None:
                out.changes.append(Change("create", kind, rid, None, None, after))
                continue
            before = stored.form(kind, found)
            if before != after:
                out.changes.append(Change("update", kind, rid, found, before, after))
    for kind in DELETE_ORDER:
        declared = set(folder.of(kind))
        for (k, mid), rid in sorted(stored.managed.items()):
            if k != kind or mid in declared:
                continue
            if prune:
                out.changes.append(Change("delete", kind, mid, rid, stored.form(kind, rid), None))
            else:
                out.kept.append((kind, mid, rid))
    out.blocked = _blocked(out, stored)
    return out


def _blocked(planned: Plan, stored: Stored) -> list[str]:
    """A query to delete that an alert or a board keeps using (the API would answer 403
    part way through the apply)."""
    deleted = {(c.kind, c.resource_id) for c in planned.changes if c.action == "delete"}
    names = {k: stored.names(k) for k in KINDS}
    out = []
    for change in planned.changes:
        if change.action != "delete" or change.kind != "query":
            continue
        users: list[tuple[Kind, str]] = [
            ("alert", rid)
            for rid, alert in stored.resources.get("alert", {}).items()
            if alert.get("query_id") == change.resource_id
        ] + [
            ("board", rid)
            for rid, board in stored.resources.get("board", {}).items()
            if any(p.get("query_id") == change.resource_id for p in board.get("panels", []))
        ]
        for kind, rid in users:
            if (kind, rid) not in deleted:
                out.append(
                    f"the query {change.id} cannot be deleted: the {kind} {names[kind][rid]} "
                    f"({rid}) uses it"
                )
    return out
