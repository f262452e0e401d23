"""The root command: every sub-command runs inside its ``invoke``, with its installation
opened once and closed at the end, and this is where an expected failure is told
(one line on stderr) and turned into the exit code of its kind (``failures``).

The root knows its commands by name, module and one line of help, and imports a
command's module only to run it (or show its own help): ``limelight --help`` and
``--version`` import none of them, nor the stores, the web framework or the
engine they reach (1.5-3 s of imports, for a listing).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import typer
from typer import _click
from typer.core import TyperCommand, TyperGroup, TyperOption

# Typer's rich help gives every flag the type "<bool>" (its plain help gives none): a
# flag takes no value, so its help shows none.
_display_type = TyperOption.display_type_rich


def _flag_without_type(option: TyperOption, ctx: _click.Context) -> str | None:
    return None if option.is_flag else _display_type(option, ctx)


TyperOption.display_type_rich = _flag_without_type  # type: ignore[method-assign, assignment]


@dataclass(frozen=True)
class Entry:
    name: str
    module: str  # a module of limelight.cli
    attribute: str  # a function (one command) or a typer.Typer (a group of commands)
    help: str  # the listing's line; a test checks it against the command's own


COMMANDS = (
    Entry("serve", "serve", "serve", "Migrate, bootstrap an empty database, and serve on "
          "LIMELIGHT_HOST:LIMELIGHT_PORT."),
    Entry("bootstrap", "serve", "bootstrap", "Ensure workspace 'default' with environment "
          "'prod', an ingest key and an admin key."),
    Entry("migrate", "serve", "migrate", "Apply the metadata migrations (serve does this too)."),
    Entry("worker", "serve", "worker", "Check due alerts and apply retention until stopped "
          "(server mode: beside any number of API processes)."),
    Entry("backup", "backups", "backup", "Back up the metadata and the events into DIR, "
          "consistently, also while serving."),
    Entry("restore", "backups", "restore", "Make a fresh data directory (LIMELIGHT_DATA_DIR) "
          "from a backup made by backup."),
    Entry("workspaces", "tenancy", "workspaces", "Create and list workspaces."),
    Entry("environments", "tenancy", "environments", "Create, list and change environments."),
    Entry("keys", "tenancy", "keys", "Create, list and revoke API keys."),
    Entry("users", "accounts", "users", "Create and list users (developers)."),
    Entry("integrations", "accounts", "integrations", "Register and manage OAuth integrations."),
    Entry("alerts", "alerts", "alerts", "List, show and test alerts."),
    Entry("datasets", "datasets", "datasets", "Show and set how long datasets keep events."),
    # A developer's commands: any server, over its HTTP API (remote.py).
    Entry("login", "login", "login", "Save a server's address and admin key as a profile, "
          "readable by you alone."),
    Entry("plan", "resources", "plan_command", "Print what applying the folder would create, "
          "change and delete."),
    Entry("apply", "resources", "apply_command", "Make the environment match the folder of "
          "resources."),
    Entry("pull", "resources", "pull_command", "Write the environment's queries, alerts and "
          "boards as files of a new folder."),
    Entry("query", "querying", "query", "Run a saved query, or one given by options, and "
          "print its result."),
    Entry("tail", "querying", "tail", "Follow events as they are stored, one a line coloured "
          "by level, until Ctrl-C."),
    Entry("send", "sending", "send", "Send events (NDJSON or a JSON array) in batches, from a "
          "file or stdin."),
)  # fmt: skip


class LazyCommand(TyperCommand):
    """A command as the root's listing shows it; ``load`` gives the command itself."""

    def __init__(self, entry: Entry) -> None:
        super().__init__(entry.name, help=entry.help)
        self.entry = entry

    def load(self) -> _click.Command:
        module = importlib.import_module(f"limelight.cli.{self.entry.module}")
        found = getattr(module, self.entry.attribute)
        if isinstance(found, typer.Typer):
            command: _click.Command = typer.main.get_group(found)
        else:  # a function: one command
            one = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
            one.command(name=self.entry.name)(found)
            command = typer.main.get_command(one)
        command.name = self.entry.name
        return command


class LimelightGroup(TyperGroup):
    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.listing = False
        for entry in COMMANDS:
            self.commands.setdefault(entry.name, LazyCommand(entry))

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        """The command, loaded to be run; as listed while the root's help is written."""
        command = self.commands.get(cmd_name)
        if isinstance(command, LazyCommand) and not self.listing:
            command = self.commands[cmd_name] = command.load()
        return command

    def format_help(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False

    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]
        from limelight.cli.failures import ExitCode, failure_of, print_error
        from limelight.cli.installation import opened

        with opened():
            try:
                return super().invoke(ctx)
            except (typer.Exit, typer.Abort, typer.TyperException):
                raise  # the framework's own: usage errors (2), --help, exits
            except Exception as exc:
                failure = failure_of(exc)
                if failure is None:
                    import traceback

                    traceback.print_exc()
                    raise typer.Exit(ExitCode.INTERNAL) from None
                print_error(failure.message)
                raise typer.Exit(failure.code) from None
