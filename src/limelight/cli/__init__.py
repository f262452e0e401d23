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

import typer

from limelight.cli.accounts import integrations, users
from limelight.cli.alerts import alerts
from limelight.cli.backups import backup, restore
from limelight.cli.command import LimelightGroup
from limelight.cli.datasets import datasets
from limelight.cli.login import login
from limelight.cli.querying import query, tail
from limelight.cli.resources import apply_command, plan_command, pull_command
from limelight.cli.sending import send
from limelight.cli.serve import bootstrap, migrate, serve, worker
from limelight.cli.tenancy import environments, keys, workspaces

app = typer.Typer(
    cls=LimelightGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Limelight observability platform. Exit codes: 0 done, 1 refused or not found, "
    "2 usage, 3 the installation cannot be used (data directory held by another process, "
    "port in use, database unreachable).",
)
for command in (serve, bootstrap, migrate, worker, backup, restore):
    app.command()(command)
# A developer's commands: any server, over its HTTP API (cli/remote.py).
app.command()(login)
app.command("plan")(plan_command)
app.command("apply")(apply_command)
app.command("pull")(pull_command)
app.command()(query)
app.command()(tail)
app.command()(send)
app.add_typer(workspaces, name="workspaces")
app.add_typer(environments, name="environments")
app.add_typer(keys, name="keys")
app.add_typer(users, name="users")
app.add_typer(integrations, name="integrations")
app.add_typer(alerts, name="alerts")
app.add_typer(datasets, name="datasets")

__all__ = ["app"]
