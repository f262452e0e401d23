"""A resource as a folder declares it, whatever its format: its kind, its id in the folder,
its fields as the API names them, and where it was written (for errors)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from limelight.ascode.documents import Document
from limelight.ascode.problems import Path, Problem

Kind = Literal["query", "alert", "board"]
KINDS: tuple[Kind, ...] = ("query", "alert", "board")
PLURAL: dict[Kind, str] = {"query": "queries", "alert": "alerts", "board": "boards"}


def _same(path: Path) -> Path:
    return path


@dataclass(frozen=True)
class Resource:
    """``body`` holds the API's fields, except that a query is named by its id in the
    folder (an alert's ``query``, a panel's ``query``). ``origin`` turns a field's path
    in ``body`` into its path in the file (Baselime's files name fields their own way)."""

    kind: Kind
    id: str
    body: dict[str, Any]
    doc: Document
    at: Path
    origin: Callable[[Path], Path] = field(default=_same, compare=False)

    def problem(self, path: Path, message: str) -> Problem:
        return self.doc.problem((*self.at, *self.origin(path)), message)

    @property
    def line(self) -> int:
        return self.doc.line_of(self.at)
