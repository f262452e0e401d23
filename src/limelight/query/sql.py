"""The one place where SQL text is assembled from names and values.

Names (JSON paths) are quoted here; values never enter the text: ``Params``
hands out ``{pN:Type}`` placeholders and keeps the values for the server-side
parameter binding of both transports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def quote_identifier(name: str) -> str:
    """A ClickHouse identifier in backquotes; backslashes and backquotes escaped."""
    return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`"


def json_path(column: str, path: str) -> str:
    """``data.`a`.`b``` for the path ``a.b``: the nested and the dotted key alike."""
    return ".".join([column, *(quote_identifier(part) for part in path.split("."))])


def json_sub_object(column: str, path: str) -> str:
    """``data.^`a`.`b``` : every path below ``a.b``, as a JSON object of its own."""
    return f"{column}.^" + ".".join(quote_identifier(part) for part in path.split("."))


def typed_subcolumn(path_sql: str, type_name: str) -> str:
    """The value of a JSON path when it holds ``type_name``, else NULL (or [] for arrays)."""
    return f"{path_sql}.:{quote_identifier(type_name)}"


@dataclass
class Params:
    """Collects bound values in order of use; placeholders are ``{p0:Type}``, ``{p1:Type}``..."""

    values: dict[str, Any] = field(default_factory=dict)
    # The reads of a text index's dictionary that ``Scope.dictionary`` wrote for the
    # statement: the one read outside the tenant filter that ``Scope.statement`` allows.
    dictionary_reads: list[str] = field(default_factory=list)

    def add(self, value: Any, type_name: str) -> str:
        name = f"p{len(self.values)}"
        self.values[name] = value
        return f"{{{name}:{type_name}}}"
