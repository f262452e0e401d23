"""The one error path of the command line: what went wrong becomes one line on stderr
and the exit code of its kind.

- 0: done.
- 1: refused or not found: the installation said no (a name taken, an unknown id,
  a weak password, a destination that did not take a test notification).
- 2: usage: the command line or a setting is wrong (click's own code for usage errors).
- 3: the installation cannot be used: its data directory is held by another
  process, the port is in use, a database cannot be reached.
- 70: a fault of the program (sysexits' EX_SOFTWARE): its traceback is printed, to report it.
"""

from __future__ import annotations

from enum import IntEnum

import pydantic
from rich.console import Console
from rich.markup import escape
from sqlalchemy.exc import InterfaceError, OperationalError

from limelight.auth.sessions import SigningKeyUnusable
from limelight.cli.output import printable_lines
from limelight.data_lock import DataDirHeld
from limelight.errors import ExposedError, InvalidValue, LimelightError, StoreError
from limelight.http_server import PortInUse


class ExitCode(IntEnum):
    OK = 0
    REFUSED = 1
    USAGE = 2
    UNUSABLE = 3
    INTERNAL = 70


class CliFailure(LimelightError):
    """An expected failure, with the exit code of its kind."""

    code: ExitCode = ExitCode.REFUSED

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Refused(CliFailure):
    code = ExitCode.REFUSED


class BadUsage(CliFailure):
    code = ExitCode.USAGE


class Unusable(CliFailure):
    code = ExitCode.UNUSABLE


# Not wrapped: an error may end in a command to copy.
_stderr = Console(stderr=True, soft_wrap=True, highlight=False)


def _settings_problem(exc: pydantic.ValidationError) -> str:
    parts = []
    for err in exc.errors():
        name = "_".join(str(p) for p in err["loc"]).upper()
        parts.append(f"LIMELIGHT_{name}: {str(err['msg']).removeprefix('Value error, ')}")
    return "invalid setting " + "; ".join(parts)


def failure_of(exc: BaseException) -> CliFailure | None:
    """The expected failure ``exc`` stands for, or None for a fault of the program."""
    if isinstance(exc, CliFailure):
        return exc
    if isinstance(exc, ExposedError):
        # A field the message already names is not named again ("Invalid retention: 7x",
        # not "Invalid retention: retention: 7x").
        said = exc.message.lower().split()
        named = "; ".join(
            e["message"] if e["field"] in said else f"{e['field']}: {e['message']}"
            for e in exc.errors or []
        )
        return Refused(exc.reason or (f"{exc.message}: {named}" if named else exc.message))
    if isinstance(exc, InvalidValue):
        return Refused(str(exc))
    if isinstance(exc, DataDirHeld | PortInUse | SigningKeyUnusable):
        return Unusable(str(exc))
    if isinstance(exc, OperationalError | InterfaceError):
        return Unusable(f"the metadata database cannot be used: {exc.orig}")
    if isinstance(exc, StoreError):
        return Unusable(f"the events store cannot be used: {exc}")
    if isinstance(exc, pydantic.ValidationError) and exc.title == "Settings":
        return BadUsage(_settings_problem(exc))
    return None


def print_error(message: str) -> None:
    # A message may quote a server's answer: its control characters are shown, not sent.
    _stderr.print(f"[red]error:[/] {escape(printable_lines(message))}")
