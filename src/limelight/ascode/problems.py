"""An error in a folder of resources: its file, line and field, and what is wrong."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from limelight.errors import LimelightError

Path = tuple[str | int, ...]


def field_name(path: Path) -> str:
    """``("queries", "slow", "filters", 0, "value")`` -> ``queries.slow.filters[0].value``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


class FolderRefused(LimelightError):
    """The folder cannot be applied; nothing was changed."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))
