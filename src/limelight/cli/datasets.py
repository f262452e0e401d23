"""``limelight datasets ...``: how long each dataset of an environment keeps its events."""

from __future__ import annotations

from typing import Annotated

import typer

from limelight.cli.installation import installation
from limelight.cli.output import JsonFlag, print_json, print_table, say
from limelight.cli.tenancy import WorkspaceOption
from limelight.retention import describe, retentions, set_dataset_retention
from limelight.store.meta import repos
from limelight.tenant import Tenant

datasets = typer.Typer(no_args_is_help=True, help="Show and set how long datasets keep events.")
EnvironmentArgument = Annotated[str, typer.Argument(help="Environment id or name.")]


def _tenant(environment: str, workspace: str) -> Tenant:
    with installation().session() as s:
        env = repos.find_environment(s, environment, repos.find_workspace(s, workspace))
        return Tenant(env.workspace_id, env.id)


@datasets.command("retention")
def datasets_retention(
    environment: EnvironmentArgument,
    dataset: Annotated[str, typer.Argument(help="The dataset's name.")],
    retention: Annotated[
        str, typer.Argument(help='How long to keep its events ("12h", "7d", "400d"), or "default".')
    ],
    workspace: WorkspaceOption = "default",
    as_json: JsonFlag = False,
) -> None:
    """Keep a dataset's events for a time of its own, or for the default again; events
    past it are removed within the hour (LIMELIGHT_RETENTION_EVERY_MINUTES)."""
    inst = installation()
    found = set_dataset_retention(
        inst.meta, inst.settings, _tenant(environment, workspace), dataset, retention
    )
    if as_json:
        print_json(found)
    else:
        default = " (the default)" if found["retention_is_default"] else ""
        say(f"{dataset} keeps its events for {found['retention']}{default}")


@datasets.command("list")
def datasets_list(
    environment: EnvironmentArgument,
    workspace: WorkspaceOption = "default",
    as_json: JsonFlag = False,
) -> None:
    """The datasets with a retention of their own, and the default of every other."""
    inst = installation()
    own = retentions(inst.meta, _tenant(environment, workspace))
    rows = [describe(name, seconds, inst.settings) for name, seconds in sorted(own.items())]
    default = describe("(every other dataset)", None, inst.settings)
    if as_json:
        print_json({"default": default["retention"], "datasets": rows})
        return
    print_table(["dataset", "retention"], [[r["name"], r["retention"]] for r in [*rows, default]])
