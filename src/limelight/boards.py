"""Boards of an environment, as the Boards API and the console keep them.

A board is a name, a description and panels in order; a panel is a saved query
of the same environment, a title (empty: the query's name is shown), a
visualization and a width in columns of a 4-column grid. Every change is
validated as a whole board before it is written (400 naming each field), and
a query id of another environment is refused exactly like one that does not
exist. The console's panel actions (add, move, resize, remove) are changes of
the panel list like any other, so they obey the same rules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.orm import Session

from limelight.errors import BadRequest
from limelight.saved_queries import UNKNOWN_AUTHOR, query_document
from limelight.store.meta import boards_repo as repo
from limelight.store.meta import managed_repo, queries_repo
from limelight.store.meta.boards_models import Board, BoardPanel
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant
from limelight.times import iso_utc
from limelight.validation import field_errors, line_problem

VISUALIZATIONS = ("line", "bars", "heatmap", "number", "table")
# The longest name of a board and title of a panel, each one line.
MAX_TEXT = 256
Visualization = Literal["line", "bars", "heatmap", "number", "table"]
COLUMNS = 4
# Every panel runs when the board opens: 24 runs keep one board well within a
# workspace's runs per minute (300 by default) and its page within its time.
MAX_PANELS = 24
# Set by the service; ignored when a client sends them (a board read back is a valid body).
SERVICE_FIELDS = ("id", "created_at", "updated_at", "author")

_HINTS = {
    "visualization": f"one of: {', '.join(VISUALIZATIONS)}",
    "width": f"a whole number of columns, 1 to {COLUMNS}",
    "query_id": "the id of a saved query of this environment",
    "name": f"a name of 1 to {MAX_TEXT} characters is required",
    "panels": f"a list of at most {MAX_PANELS} panels",
}
_EXAMPLES = {"PanelFields": '{"query_id": "...", "visualization": "line", "width": 2}'}


class PanelFields(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    id: str | None = None  # a panel read back; the service sets it
    query_id: Annotated[str, Field(min_length=1, max_length=32)]
    title: Annotated[str, Field(max_length=MAX_TEXT)] = ""
    visualization: Visualization = "line"
    width: Annotated[int, Field(ge=1, le=COLUMNS)] = 2


class BoardFields(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]
    description: Annotated[str, Field(max_length=10_000)] | None = None
    panels: Annotated[list[PanelFields], Field(max_length=MAX_PANELS)] = []


def validate(data: dict[str, Any]) -> BoardFields:
    """The board's fields; 400 listing every invalid field."""
    data = {k: v for k, v in data.items() if k not in SERVICE_FIELDS}
    if isinstance(data.get("name"), str):
        data["name"] = data["name"].strip()
    try:
        return BoardFields.model_validate(data)
    except pydantic.ValidationError as exc:
        errors = field_errors(exc, hints=_HINTS, examples=_EXAMPLES, root="board")
        raise BadRequest(message="Invalid board", errors=errors) from None


def check_lines(before: dict[str, Any] | None, after: BoardFields) -> None:
    """The name and the panel titles written are one line each: those already stored
    (before the rule was made) stay, so a board keeps taking changes of other fields."""
    stored = before or {}
    errors = []
    if after.name != stored.get("name") and (problem := line_problem(after.name, MAX_TEXT)):
        errors.append({"field": "name", "message": problem})
    kept = {p.get("title") for p in stored.get("panels") or []}
    for i, panel in enumerate(after.panels):
        if panel.title not in kept and (problem := line_problem(panel.title, MAX_TEXT)):
            errors.append({"field": f"panels[{i}].title", "message": problem})
    if errors:
        raise BadRequest(message="Invalid board", errors=errors)


def _check_queries(s: Session, tenant: Tenant, fields: BoardFields) -> None:
    """Every panel's query is one of the tenant's (another environment's is as unknown as
    a missing one)."""
    known = repo.tenant_queries(s, tenant, (p.query_id for p in fields.panels))
    errors = [
        {"field": f"panels[{i}].query_id", "message": "no saved query with this id here"}
        for i, p in enumerate(fields.panels)
        if p.query_id not in known
    ]
    if errors:
        raise BadRequest(message="Invalid board", errors=errors)


def _panel_values(fields: BoardFields, keep_ids: bool) -> list[repo.PanelValues]:
    return [
        repo.PanelValues(p.query_id, p.title, p.visualization, p.width, p.id if keep_ids else None)
        for p in fields.panels
    ]


def panel_document(panel: BoardPanel) -> dict[str, Any]:
    return {
        "id": panel.id,
        "query_id": panel.query_id,
        "title": panel.title,
        "visualization": panel.visualization,
        "width": panel.width,
    }


def board_document(board: Board, panels: list[BoardPanel]) -> dict[str, Any]:
    """The board as the API answers it: every field, always present."""
    return {
        "id": board.id,
        "name": board.name,
        "description": board.description,
        "panels": [panel_document(p) for p in panels],
        "created_at": iso_utc(board.created_at),
        "updated_at": iso_utc(board.updated_at),
        "author": board.author or UNKNOWN_AUTHOR,
    }


def _document(s: Session, board: Board) -> dict[str, Any]:
    return board_document(board, repo.panels_of(s, [board.id])[board.id])


def create(
    meta: MetaDB,
    tenant: Tenant,
    data: dict[str, Any],
    author: str | None,
    managed_id: str | None = None,
) -> str:
    """The new board's id. ``managed_id``: the id a folder of resources gives it, recorded
    with it (``managed_repo``)."""
    if managed_id is not None:
        managed_repo.check_managed_id(managed_id)
    fields = validate(data)
    check_lines(None, fields)
    with meta.session(immediate=True) as s:
        _check_queries(s, tenant, fields)
        board = repo.create_board(s, tenant, fields.name, fields.description, author)
        repo.set_panels(s, board, _panel_values(fields, keep_ids=False), now=board.updated_at)
        if managed_id is not None:
            managed_repo.record(s, tenant, "board", managed_id, board.id)
        return board.id


def all_boards(meta: MetaDB, tenant: Tenant) -> list[dict[str, Any]]:
    with meta.session() as s:
        boards = repo.list_boards(s, tenant)
        panels = repo.panels_of(s, (b.id for b in boards))
        return [board_document(b, panels[b.id]) for b in boards]


def get(meta: MetaDB, tenant: Tenant, board_id: str) -> dict[str, Any]:
    """The board; 404 for an unknown id or another environment's board."""
    with meta.session() as s:
        return _document(s, repo.get_board(s, tenant, board_id))


def _change(
    meta: MetaDB,
    tenant: Tenant,
    board_id: str,
    edit: Callable[[dict[str, Any]], dict[str, Any]],
    keep_ids: bool,
) -> dict[str, Any]:
    """The board after ``edit`` (its writable fields to the new ones), validated whole and
    written in one transaction, so concurrent changes cannot lose each other's."""
    with meta.session(immediate=True) as s:
        board = repo.get_board(s, tenant, board_id, lock=True)
        current = _document(s, board)
        writable = {k: v for k, v in current.items() if k not in SERVICE_FIELDS}
        fields = validate(edit(writable))
        check_lines(writable, fields)
        _check_queries(s, tenant, fields)
        board.name = fields.name
        board.description = fields.description
        repo.set_panels(s, board, _panel_values(fields, keep_ids))
        return _document(s, board)


def update(meta: MetaDB, tenant: Tenant, board_id: str, data: dict[str, Any]) -> dict[str, Any]:
    """The changed board: the fields sent replace the stored ones and the rest stay
    (``panels``, when sent, is the whole new list; ``null`` clears the description)."""
    patch = {k: v for k, v in data.items() if k not in SERVICE_FIELDS}
    # Panels sent are new rows (ids sent are ignored); panels kept keep their ids.
    edit = lambda stored: {**stored, **patch}  # noqa: E731
    return _change(meta, tenant, board_id, edit, keep_ids="panels" not in patch)


def delete(meta: MetaDB, tenant: Tenant, board_id: str) -> None:
    with meta.session(immediate=True) as s:
        repo.delete_board(s, tenant, board_id)


# -- the console's panel actions ---------------------------------------------------------


def _panels_edit(
    change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda stored: {**stored, "panels": change(list(stored["panels"]))}


def _index(panels: list[dict[str, Any]], panel_id: str) -> int:
    for i, panel in enumerate(panels):
        if panel["id"] == panel_id:
            return i
    raise BadRequest("that panel is no longer on this board; reload the page")


def add_panel(meta: MetaDB, tenant: Tenant, board_id: str, panel: dict[str, Any]) -> dict[str, Any]:
    """The board with ``panel`` added last."""
    return _change(meta, tenant, board_id, _panels_edit(lambda ps: [*ps, panel]), keep_ids=True)


def move_panel(
    meta: MetaDB, tenant: Tenant, board_id: str, panel_id: str, steps: int
) -> dict[str, Any]:
    """The panel ``steps`` places later (earlier when negative), within the board."""

    def move(panels: list[dict[str, Any]]) -> list[dict[str, Any]]:
        i = _index(panels, panel_id)
        moved = panels.pop(i)
        panels.insert(max(0, min(len(panels), i + steps)), moved)
        return panels

    return _change(meta, tenant, board_id, _panels_edit(move), keep_ids=True)


def resize_panel(
    meta: MetaDB, tenant: Tenant, board_id: str, panel_id: str, width: object
) -> dict[str, Any]:
    def resize(panels: list[dict[str, Any]]) -> list[dict[str, Any]]:
        i = _index(panels, panel_id)
        panels[i] = {**panels[i], "width": width}
        return panels

    return _change(meta, tenant, board_id, _panels_edit(resize), keep_ids=True)


def remove_panel(meta: MetaDB, tenant: Tenant, board_id: str, panel_id: str) -> dict[str, Any]:
    def remove(panels: list[dict[str, Any]]) -> list[dict[str, Any]]:
        panels.pop(_index(panels, panel_id))
        return panels

    return _change(meta, tenant, board_id, _panels_edit(remove), keep_ids=True)


def with_queries(
    meta: MetaDB, tenant: Tenant, board_id: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The board, and the saved query of each of its panels in the panels' order (read
    in one transaction: what the board page runs)."""
    with meta.session() as s:
        board = repo.get_board(s, tenant, board_id)
        document = _document(s, board)
        queries = {
            p["query_id"]: query_document(queries_repo.get_query(s, tenant, p["query_id"]))
            for p in document["panels"]
        }
        return document, [queries[p["query_id"]] for p in document["panels"]]
