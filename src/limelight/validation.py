"""Validation errors as the API's ``errors`` list: one entry per field.

Every HTTP surface answers a bad body, query string or address with
``{"errors": [{"field", "message"}]}``, the field written as a path
(``destinations[0].url``); this is the one place that list is made, from
pydantic's errors or FastAPI's (which are pydantic's with the request part first).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Protocol

from pydantic import AfterValidator, StrictStr

# pydantic's labels of union branches and tagged types, which are no part of a path.
_BRANCH_LABELS = frozenset(
    {
        "str",
        "int",
        "float",
        "bool",
        "none",
        "list",
        "dict",
        "function-after",
        "constrained-int",
        "constrained-float",
    }
)


class HasErrors(Protocol):
    """pydantic's ValidationError and FastAPI's RequestValidationError alike."""

    def errors(self) -> Sequence[Any]: ...


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


def _hint(names: list[str], hints: Mapping[str, str]) -> str | None:
    # "filters.value" names a field of a list's items; "type" any field so named.
    if len(names) >= 2 and (hint := hints.get(".".join(names[-2:]))):
        return hint
    return hints.get(names[-1]) if names else None


def object_expected(err: Any, examples: Mapping[str, str]) -> str:
    """The message for a value that should have been an object: its shape, never the
    name of the class that reads it."""
    example = examples.get(str((err.get("ctx") or {}).get("class_name", "")))
    return f"must be an object, e.g. {example}" if example else "must be an object"


def field_errors(
    exc: HasErrors,
    *,
    prefix: str = "",
    hints: Mapping[str, str] | None = None,
    root: str = "body",
    skip: int = 0,
    examples: Mapping[str, str] | None = None,
) -> list[dict[str, str]]:
    """One ``{field, message}`` per field (a union reports each branch: the first wins).

    ``hints`` replace pydantic's message for a field of that name (or of that
    ``list.name``) with a sentence saying what is allowed; ``skip`` drops the first
    parts of each location (FastAPI's "body", "query", "path"); ``examples`` show,
    by class name, what an object expected where something else came looks like.
    """
    errors: dict[str, str] = {}
    for err in exc.errors():
        loc = tuple(p for p in tuple(err.get("loc", ()))[skip:] if isinstance(p, int | str))
        field = field_path(loc, prefix)
        names = [p for p in loc if isinstance(p, str) and p not in _BRANCH_LABELS]
        if err.get("type") == "extra_forbidden":
            message = "unknown field"
        elif err.get("type") == "model_type":
            message = object_expected(err, examples or {})
        elif err.get("type") == "too_long":  # a list with more items than allowed
            ctx = err.get("ctx") or {}
            message = f"at most {ctx.get('max_length')} items; {ctx.get('actual_length')} given"
        elif hints and (hint := _hint(names, hints)):
            message = hint
        else:
            message = str(err.get("msg", "not valid")).removeprefix("Value error, ")
        errors.setdefault(field or root, message)
    return [{"field": f, "message": m} for f, m in errors.items()]


# C0, DEL and C1 (NEL U+0085 breaks a line, CSI U+009B starts a terminal's escape
# sequence as ESC [ does), and the line and paragraph separators, which break a line
# wherever Unicode's line breaks are read. Not the reordering marks (U+202A-U+202E,
# U+2066-U+2069): a name written right to left needs them, and the console and the
# command line show them as their codes.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (C0, DEL or C1: U+0000, a line break,
    ESC, NEL, CSI) or a line or paragraph separator (U+2028, U+2029)."""
    return _CONTROL.search(text) is not None


def one_line(text: str) -> str:
    """A name is one line of text: it heads pages, an email's subject, a Slack message
    and the operator's terminal, where a line break or an escape sequence would do harm
    (and PostgreSQL's text holds no U+0000)."""
    if has_control(text):
        raise ValueError("must be one line, without control characters")
    return text


# A name, a title: one line of text.
Line = Annotated[StrictStr, AfterValidator(one_line)]


def line_problem(text: str, most: int) -> str | None:
    """Why ``text`` is not one line of at most ``most`` characters, or None. For names
    checked when they are written, not when a stored one is read: a name stored before a
    rule was made stays readable and its query runs."""
    if len(text) > most:
        return f"one line of at most {most} characters; {len(text)} given"
    try:
        one_line(text)
    except ValueError as exc:
        return str(exc)
    return None
