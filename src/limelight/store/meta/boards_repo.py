"""Boards and their panels, always scoped to one tenant.

A board of another workspace or environment is reported exactly like a missing
one (``NotFound``). A board's panels are written as a whole list: the old rows
go, the new ones come in order, so a reorder never meets the unique position of
a row not yet moved.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from limelight.errors import NotFound
from limelight.ids import new_id
from limelight.store.meta.boards_models import Board, BoardPanel
from limelight.store.meta.models import utcnow
from limelight.store.meta.queries_models import SavedQuery
from limelight.tenant import Tenant


@dataclass(frozen=True)
class PanelValues:
    """A panel as written; ``id`` keeps a panel's id through a change of the list."""

    query_id: str
    title: str
    visualization: str
    width: int
    id: str | None = None


def create_board(
    s: Session,
    tenant: Tenant,
    name: str,
    description: str | None,
    author: str | None,
    now: datetime | None = None,
) -> Board:
    now = now or utcnow()
    board = Board(
        id=new_id(),
        workspace_id=tenant.workspace_id,
        environment_id=tenant.environment_id,
        name=name,
        description=description,
        author=author,
        created_at=now,
        updated_at=now,
    )
    s.add(board)
    s.flush()
    return board


def get_board(s: Session, tenant: Tenant, board_id: str, lock: bool = False) -> Board:
    """``lock``: held until the transaction ends (PostgreSQL), for a change of its panels
    computed from the panels as read."""
    q = select(Board).where(
        Board.id == board_id,
        Board.workspace_id == tenant.workspace_id,
        Board.environment_id == tenant.environment_id,
    )
    board = s.scalar(q.with_for_update() if lock else q)
    if board is None:
        raise NotFound()
    return board


def list_boards(s: Session, tenant: Tenant) -> list[Board]:
    return list(
        s.scalars(
            select(Board)
            .where(
                Board.workspace_id == tenant.workspace_id,
                Board.environment_id == tenant.environment_id,
            )
            .order_by(Board.created_at, Board.id)
        )
    )


def panels_of(s: Session, board_ids: Iterable[str]) -> dict[str, list[BoardPanel]]:
    """Each board's panels in order (a board without panels maps to [])."""
    ids = list(board_ids)
    found: dict[str, list[BoardPanel]] = {board_id: [] for board_id in ids}
    if ids:
        rows = s.scalars(
            select(BoardPanel)
            .where(BoardPanel.board_id.in_(ids))
            .order_by(BoardPanel.board_id, BoardPanel.position)
        )
        for panel in rows:
            found[panel.board_id].append(panel)
    return found


def tenant_queries(s: Session, tenant: Tenant, query_ids: Iterable[str]) -> set[str]:
    """Which of ``query_ids`` are saved queries of the tenant. The rows stay share-locked
    until the transaction ends (PostgreSQL), so they cannot be deleted under a panel being
    written (the foreign key would refuse it anyway: this makes it a clear error)."""
    ids = sorted(set(query_ids))
    if not ids:
        return set()
    q = (
        select(SavedQuery.id)
        .where(
            SavedQuery.id.in_(ids),
            SavedQuery.workspace_id == tenant.workspace_id,
            SavedQuery.environment_id == tenant.environment_id,
        )
        .with_for_update(read=True)
    )
    return set(s.scalars(q))


def set_panels(
    s: Session, board: Board, panels: Sequence[PanelValues], now: datetime | None = None
) -> list[BoardPanel]:
    """Replace the board's panels with ``panels``, in that order."""
    s.execute(delete(BoardPanel).where(BoardPanel.board_id == board.id))
    s.flush()
    rows = [
        BoardPanel(
            id=p.id or new_id(),
            board_id=board.id,
            position=i,
            query_id=p.query_id,
            title=p.title,
            visualization=p.visualization,
            width=p.width,
        )
        for i, p in enumerate(panels)
    ]
    s.add_all(rows)
    board.updated_at = now or utcnow()
    s.flush()
    return rows


def delete_board(s: Session, tenant: Tenant, board_id: str) -> None:
    board = get_board(s, tenant, board_id)
    s.execute(delete(BoardPanel).where(BoardPanel.board_id == board.id))
    s.delete(board)
    s.flush()


def boards_showing(s: Session, query_id: str) -> list[Board]:
    """The boards with a panel of the query, oldest first, each once."""
    shown = select(BoardPanel.board_id).where(BoardPanel.query_id == query_id)
    return list(
        s.scalars(select(Board).where(Board.id.in_(shown)).order_by(Board.created_at, Board.id))
    )
