"""The root command: every sub-command runs inside its ``invoke``, with its installation
opened once and closed at the end, and this is where an expected failure is told
(one line on stderr) and turned into the exit code of its kind (``failures``)."""

from __future__ import annotations

import traceback
from typing import Any

import typer
from typer.core import TyperGroup

from limelight.cli.failures import ExitCode, failure_of, print_error
from limelight.cli.installation import opened


class LimelightGroup(TyperGroup):
    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]
        with opened():
            try:
                return super().invoke(ctx)
            except (typer.Exit, typer.Abort, typer.TyperException):
                raise  # the framework's own: usage errors (2), --help, exits
            except Exception as exc:
                failure = failure_of(exc)
                if failure is None:
                    traceback.print_exc()
                    raise typer.Exit(ExitCode.INTERNAL) from None
                print_error(failure.message)
                raise typer.Exit(failure.code) from None
