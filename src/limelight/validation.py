"""Pydantic's validation errors as the API's ``errors`` list: one entry per field.

Every HTTP surface answers a bad body with ``{"errors": [{"field", "message"}]}``,
the field written as a path (``destinations[0].url``); this is where that list
is made from pydantic's errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pydantic

# pydantic's labels of union branches and tagged types, which are no part of a path.
_BRANCH_LABELS = frozenset({"str", "int", "float", "bool", "list", "dict", "function-after"})


def field_path(loc: tuple[int | str, ...], prefix: str = "") -> str:
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in _BRANCH_LABELS or "[" in part or part[:1].isupper():
            continue  # "str", "list[...]", "KeyRef": the branch of a union, not a field
        else:
            out += f".{part}" if out else part
    return out


def object_expected(err: Any, examples: Mapping[str, str]) -> str:
    """The message for a value that should have been an object: its shape, never the
    name of the class that reads it."""
    example = examples.get(str((err.get("ctx") or {}).get("class_name", "")))
    return f"must be an object, e.g. {example}" if example else "must be an object"


def field_errors(
    exc: pydantic.ValidationError,
    *,
    prefix: str = "",
    hints: Mapping[str, str] | None = None,
    root: str = "body",
    examples: Mapping[str, str] | None = None,
) -> list[dict[str, str]]:
    """One ``{field, message}`` per field (a union reports each branch: the first wins).

    ``hints`` replace pydantic's message for a field of that name with a sentence
    saying what is allowed; ``examples`` show, by class name, what an object expected
    where something else came looks like.
    """
    errors: dict[str, str] = {}
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if isinstance(p, int | str))
        field = field_path(loc, prefix)
        name = next((p for p in reversed(loc) if isinstance(p, str)), "")
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        elif err["type"] == "model_type":
            message = object_expected(err, examples or {})
        elif hints and name in hints:
            message = f"invalid value; {hints[name]}"
        else:
            message = str(err["msg"]).removeprefix("Value error, ")
        errors.setdefault(field or root, message)
    return [{"field": f, "message": m} for f, m in errors.items()]
