"""The ``limelight`` command.

Every command acts on one installation, named on stderr as it starts (so
``--json`` output stays clean): its settings and metadata database are opened
once per command (``installation``). Tables never cut an id or a key
(``output``), times carry their zone, and every expected failure is one line on
stderr with the exit code of its kind (``failures``: 0 done, 1 refused or not
found, 2 usage, 3 the installation cannot be used, 70 a fault of the program).

Commands other than ``serve``, ``backup`` and ``restore`` touch only the
metadata database, so they run beside a serving process.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Annotated

import typer

from limelight.cli.command import LimelightGroup

app = typer.Typer(
    cls=LimelightGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Limelight observability platform. Exit codes: 0 done, 1 refused or not found, "
    "2 usage, 3 the installation cannot be used (data directory held by another process, "
    "port in use, database unreachable).",
)


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(f"limelight {version('limelight')}")
        raise typer.Exit()


@app.callback()
def root(
    _version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Limelight observability platform. Exit codes: 0 done, 1 refused or not found, 2 usage,
    3 the installation cannot be used (data directory held by another process, port in use,
    database unreachable)."""


__all__ = ["app"]
