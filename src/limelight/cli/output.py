"""How the command line prints: tables that never cut a value, ``--json``, and times
with their zone.

A table wider than the terminal is printed as records instead (one ``column:
value`` line each, as psql's expanded display does), so an id, a key or a client
secret is always whole on one line, ready to copy.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]

out = Console(soft_wrap=True, highlight=False)
notes = Console(stderr=True, soft_wrap=True, highlight=False)


def print_json(value: Any) -> None:
    typer.echo(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())


def json_text(value: Any) -> str:
    """A value inside a line of text as JSON (``{"service":"api"}``, ``null``, ``true``),
    as the API writes it: never Python's repr."""
    return orjson.dumps(value).decode()


def when(moment: datetime | None) -> str | None:
    """ISO 8601 in UTC, with its zone: ``2026-11-21T10:00:00+00:00``."""
    if moment is None:
        return None
    # SQLite hands datetimes back without their zone; they are all UTC.
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="seconds")


def when_ms(unix_ms: int | None) -> str | None:
    return None if unix_ms is None else when(datetime.fromtimestamp(unix_ms / 1000, UTC))


def say(text: str) -> None:
    """A line for people on stdout; ``text`` may hold Rich markup: what it holds from
    elsewhere goes through ``safe``."""
    out.print(text)


def note(text: str) -> None:
    """A remark on stderr, out of the way of what a script reads."""
    notes.print(f"[dim]{escape(printable_lines(text))}[/]")


Cell = str | int | bool | None

# What tenants wrote (names, URLs), their events hold (group values, keys) or a server
# answers (its messages, ids) may hold a terminal's escape sequences: shown as \x1b,
# never sent to the terminal (one could set the window's title, write the clipboard or
# clear the screen). So are the marks that reorder or hide characters (direction
# overrides, zero-width spaces): a line must read as what it holds.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


def _code(char: str) -> str:
    n = ord(char)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def printable(text: str) -> str:
    """``text`` with its control characters shown as their codes."""
    return _CONTROL.sub(lambda c: _code(c[0]), text)


def printable_lines(text: str) -> str:
    """As ``printable``, keeping the line breaks of a message of several lines."""
    return "\n".join(printable(line) for line in text.split("\n"))


def safe(text: str) -> str:
    """Text from elsewhere inside a line of Rich markup: shown, and never read as markup
    (``[/]`` in a group's value failed the print, ``[link=...]`` made a link)."""
    return escape(printable(text))


def _cell(value: Cell) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return printable(str(value))


def print_table(columns: Sequence[str], rows: Sequence[Sequence[Cell]]) -> None:
    """A table when it fits the terminal, else one record per row; nothing is cut."""
    table = Table(header_style="bold")
    for name in columns:
        table.add_column(safe(name), no_wrap=True, overflow="ignore")
    for row in rows:
        table.add_row(*(escape(_cell(v)) for v in row))
    # Measured as if the terminal had no edge: its natural width.
    natural = Measurement.get(out, out.options.update_width(1 << 20), table).maximum
    if natural <= out.width:
        out.print(table)
        return
    heads = [printable(c) for c in columns]
    label = max(len(h) for h in heads) + 1
    for i, row in enumerate(rows):
        if i:
            out.print()
        for name, value in zip(heads, row, strict=True):
            text = _cell(value)
            head = f"{name}:".ljust(label) if text else f"{name}:"
            out.print(f"[bold]{escape(head)}[/] {escape(text)}".rstrip())


def print_fields(fields: Sequence[tuple[str, Cell]]) -> None:
    """One ``name value`` line per field (the ``show`` commands)."""
    label = max((len(printable(n)) for n, _ in fields), default=0)
    for name, value in fields:
        text, head = _cell(value), printable(name)
        out.print(f"[bold]{escape(head.ljust(label) if text else head)}[/] {escape(text)}".rstrip())
