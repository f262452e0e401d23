"""``limelight datasets ...``: how long each dataset of an environment keeps its events."""

from __future__ import annotations

from typing import Annotated

import typer

from limelight.cli.engine import datasets_held
from limelight.cli.failures import Refused
from limelight.cli.installation import installation
from limelight.cli.output import JsonFlag, print_json, print_table, safe, say
from limelight.cli.tenancy import WorkspaceOption
from limelight.ingest.service import check_dataset
from limelight.retention import describe, parse_retention, retentions, set_dataset_retention
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
    create: Annotated[
        bool,
        typer.Option(
            "--create", help="Set it although the environment has no event in the dataset yet."
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Keep a dataset's events for a time of its own, or for the default again; events
    past it are removed within the hour (LIMELIGHT_RETENTION_EVERY_MINUTES)."""
    inst = installation()
    tenant = _tenant(environment, workspace)
    check_dataset(dataset)  # a bad name or retention is refused before the engine is read
    parse_retention(retention)
    if not create and dataset not in retentions(inst.meta, tenant):
        held = datasets_held(inst.settings, tenant)
        if dataset not in held:
            known = f"known: {', '.join(held)}" if held else "it has no events yet"
            raise Refused(
                f"environment {environment!r} has no dataset {dataset!r} ({known}); "
                "check the name, or add --create to set the retention of a dataset to come"
            )
    found = set_dataset_retention(inst.meta, inst.settings, tenant, dataset, retention)
    if as_json:
        print_json(found)
    else:
        default = " (the default)" if found["retention_is_default"] else ""
        say(safe(f"{dataset} keeps its events for {found['retention']}{default}"))


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
