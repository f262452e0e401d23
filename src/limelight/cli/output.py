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
    """A line for people on stdout; ``text`` may hold Rich markup."""
    out.print(text)


def note(text: str) -> None:
    """A remark on stderr, out of the way of what a script reads."""
    notes.print(f"[dim]{escape(text)}[/]")


Cell = str | int | bool | None

# What tenants wrote (names, URLs) or their events hold (group values) may hold a
# terminal's escape sequences: shown as \x1b, never sent to the terminal.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _cell(value: Cell) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return _CONTROL.sub(lambda c: f"\\x{ord(c[0]):02x}", str(value))


def print_table(columns: Sequence[str], rows: Sequence[Sequence[Cell]]) -> None:
    """A table when it fits the terminal, else one record per row; nothing is cut."""
    table = Table(header_style="bold")
    for name in columns:
        table.add_column(name, no_wrap=True, overflow="ignore")
    for row in rows:
        table.add_row(*(escape(_cell(v)) for v in row))
    # Measured as if the terminal had no edge: its natural width.
    natural = Measurement.get(out, out.options.update_width(1 << 20), table).maximum
    if natural <= out.width:
        out.print(table)
        return
    label = max(len(c) for c in columns) + 1
    for i, row in enumerate(rows):
        if i:
            out.print()
        for name, value in zip(columns, row, strict=True):
            text = _cell(value)
            head = f"{name}:".ljust(label) if text else f"{name}:"
            out.print(f"[bold]{escape(head)}[/] {escape(text)}".rstrip())


def print_fields(fields: Sequence[tuple[str, Cell]]) -> None:
    """One ``name value`` line per field (the ``show`` commands)."""
    label = max((len(n) for n, _ in fields), default=0)
    for name, value in fields:
        text = _cell(value)
        out.print(f"[bold]{escape(name.ljust(label) if text else name)}[/] {escape(text)}".rstrip())
