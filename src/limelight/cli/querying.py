"""``limelight query`` and ``limelight tail``: a server's events from the terminal.

Both send an inline query run (``POST /v1/query_run``), as the console does:
the same compiler, tenant filter and limits. ``tail`` asks every second for the
events stored after the newest it printed (event ids grow with the time they
were stored, as the console's live tail uses them) until Ctrl-C.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import quote

import typer
from rich.markup import escape

from limelight.cli.failures import BadUsage, Refused, Unusable
from limelight.cli.output import (
    JsonFlag,
    json_text,
    note,
    print_json,
    print_table,
    printable,
    safe,
    say,
)
from limelight.cli.remote import (
    ApiError,
    ProfileOption,
    Server,
    UrlOption,
    object_of,
    objects_of,
    target,
)
from limelight.cli.terminal import event_line, moment_ms, now_ms, sparkline

if TYPE_CHECKING:
    from rich.console import Console

Calcs = Annotated[
    list[str] | None,
    typer.Option("--calc", help="A calculation: COUNT, P99(duration), AVG(x) as avg (repeatable)."),
]  # fmt: skip
GroupBys = Annotated[list[str] | None, typer.Option("--group-by", help="A key to group by.")]
Filters = Annotated[
    list[str] | None,
    typer.Option("--filter", help="'key OPERATION value', e.g. 'level = error' (repeatable)."),
]  # fmt: skip
Needle = Annotated[str | None, typer.Option("--needle", help="Free text to search for.")]
Datasets = Annotated[list[str] | None, typer.Option("--dataset", help="A dataset (repeatable).")]
# How long a run's request asks the server to hold its answer for the run to finish;
# the client waits that long beyond its own timeout (remote.Server.send).
RUN_WAIT_S = 30
# How long a run may stay STARTED, poll after poll, before the command gives up.
SETTLE_S = 120.0
POLL_PAUSE_S = 0.5
# As often as the console's live tail looks: 30 runs a minute of the workspace's 300.
TAIL_EVERY_S = 2.0
BUSY_WAIT_S = 10.0
TAIL_BATCH = 100
SERIES_SHOWN = 5


def inline_query(
    calcs: list[str] | None,
    group_bys: list[str] | None,
    filters: list[str] | None,
    needle: str | None,
    datasets: list[str] | None,
) -> dict[str, Any]:
    """The query the options describe, in the Queries API's fields."""
    from limelight.ascode import baselime

    query: dict[str, Any] = {}
    try:
        if calcs:
            query["calculations"] = [baselime.calculation(c, ()) for c in calcs]
        if filters:
            query["filters"] = [baselime.filter_(f, ()) for f in filters]
    except baselime.BaselimeRefusal as exc:
        raise BadUsage(exc.message) from None
    if group_bys:
        query["group_bys"] = [{"key": key} for key in group_bys]
    if needle:
        query["needle"] = {"value": needle}
    if datasets:
        query["namespaces"] = [{"type": "dataset", "value": d} for d in datasets]
    return query


def run(server: Server, body: dict[str, Any]) -> dict[str, Any]:
    """A query run's data, once it has settled (within ``SETTLE_S``)."""
    deadline = time.monotonic() + SETTLE_S
    wait = {"wait": RUN_WAIT_S}
    answer = server.call("POST", "/v1/query_run", json=body, params=wait, wait_s=RUN_WAIT_S)
    while (state := object_of(answer, "query_run", "query run")).get("status") == "STARTED":
        if time.monotonic() > deadline:
            raise Unusable(f"the query run did not finish within {SETTLE_S:.0f} s")
        if not isinstance(state.get("id"), str):
            raise Refused("query run: unexpected answer: a run without an id")
        # A server answering at once instead of waiting is not asked in a busy loop.
        time.sleep(POLL_PAUSE_S)
        path = f"/v1/query_run/{quote(state['id'], safe='')}"
        answer = server.call("GET", path, params=wait, wait_s=RUN_WAIT_S)
    if state.get("status") == "FAILED":
        raise Refused(f"the query failed: {state.get('error', 'no reason given')}")
    if state.get("status") != "COMPLETED":
        raise Refused(f"query run: unexpected answer: status {json_text(state.get('status'))}")
    return object_of(answer, "data", "query run")


def _aggregates(data: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows and time series of a calculation's data, checked for the shape printed."""
    rows = objects_of(data, "aggregates", "query run")
    series = objects_of({"series": data.get("series") or []}, "series", "query run")
    for row in rows:
        object_of(row, "groups", "query run")
        object_of(row, "values", "query run")
    for bucket in (b for s in series for b in objects_of(s, "data", "query run")):
        object_of(bucket, "groups", "query run")
        object_of(bucket, "aggregates", "query run")
    return rows, series


def _saved(server: Server, name: str) -> str:
    """The id of the saved query with this id, this id in a resources folder (what
    ``limelight apply`` manages it by: ``slow-checkouts``), or this name."""
    queries = objects_of(server.call("GET", "/v1/queries"), "queries", "saved queries")
    if any(q.get("id") == name for q in queries):
        return name
    managed = objects_of(server.call("GET", "/v1/managed"), "managed", "managed")
    ids = [m.get("id") for m in managed if (m.get("type"), m.get("managed_id")) == ("query", name)]
    if ids and isinstance(ids[0], str):
        return ids[0]
    named = [str(q.get("id")) for q in queries if q.get("name") == name]
    if len(named) > 1:
        raise Refused(
            f"{len(named)} saved queries are named {name!r}: give an id ({', '.join(named)})"
        )
    if not named:
        raise Refused(f"no saved query has the id, folder id or name {name!r}")
    return named[0]


def _print_calculations(data: dict[str, Any], console: Console) -> None:
    rows, series = _aggregates(data)
    if not rows:
        say("No events in the timeframe.")
        return
    groups = list(rows[0]["groups"])
    values = [v for v in rows[0]["values"] if v != "_count"]
    print_table(
        [*groups, *values],
        [[*(r["groups"].get(g) for g in groups), *(r["values"].get(v) for v in values)]
         for r in rows],
    )  # fmt: skip
    if len(series) < 2 or not values:
        return
    first = values[0]
    say(f"\n{safe(first)} over time ({len(series)} buckets):")
    width = max(10, console.width - 30)
    for row in rows[:SERIES_SHOWN]:
        points = []
        for bucket in series:
            match = [d for d in bucket["data"] if d["groups"] == row["groups"]]
            value = match[0]["aggregates"].get(first) if match else None
            points.append(value if isinstance(value, int | float) else None)
        label = printable(", ".join(str(v) for v in row["groups"].values()) or "all")
        say(f"  {escape(f'{label[:24]:24}')}  {sparkline(points, width)}")


def query(
    saved: Annotated[
        str | None, typer.Argument(help="A saved query's id or name; else the options.")
    ] = None,
    calc: Calcs = None,
    group_by: GroupBys = None,
    filter_: Annotated[
        list[str] | None,
        typer.Option("--filter", help="'key OPERATION value', e.g. 'level = error'."),
    ] = None,
    needle: Needle = None,
    dataset: Datasets = None,
    since: Annotated[
        str, typer.Option("--from", help="now, 15m, 1h, 7d, ISO 8601, unix ms.")
    ] = "1h",
    until: Annotated[str, typer.Option("--to", help="As --from.")] = "now",
    limit: Annotated[int | None, typer.Option("--limit", min=1, max=10_000)] = None,
    url: UrlOption = None,
    profile: ProfileOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Run a saved query, or one given by options, and print its result.

    A table, and a time series as a line of the terminal; events one a line."""
    from rich.console import Console

    inline = inline_query(calc, group_by, filter_, needle, dataset)
    if saved and inline:
        raise BadUsage(
            "give a saved query or --calc/--group-by/--filter/--needle/--dataset, not both"
        )
    now = now_ms()
    body: dict[str, Any] = {
        "from": moment_ms(since, "--from", now),
        "to": moment_ms(until, "--to", now),
    }
    if body["from"] >= body["to"]:
        raise BadUsage("--from must be before --to")
    if limit is not None:
        body["limit"] = limit
    with Server(target(url, profile)) as server:
        if saved:
            body["query_id"] = _saved(server, saved)
        else:
            body["query"] = inline
        data = run(server, body)
    if as_json:
        print_json(data)
        return
    # What the run found odd ("no dataset 'logz' here; known: ..."): a mistyped name
    # otherwise reads as "No events in the timeframe."
    for warning in data.get("warnings") or []:
        note(f"warning: {warning}")
    if "events" in data:
        events = objects_of(data, "events", "query run")
        for event in events:
            say(event_line(event))
        if not events:
            say("No events in the timeframe.")
    else:
        _print_calculations(data, Console())


def tail(
    filter_: Annotated[
        list[str] | None,
        typer.Option("--filter", help="'key OPERATION value', e.g. 'level = error'."),
    ] = None,
    needle: Needle = None,
    dataset: Datasets = None,
    since: Annotated[
        str, typer.Option("--from", help="Start with the events since: now, 1m, 1h...")
    ] = "now",
    url: UrlOption = None,
    profile: ProfileOption = None,
) -> None:
    """Follow events as they are stored, one a line coloured by level, until Ctrl-C."""
    from limelight.ids import id_floor

    query = inline_query(None, None, filter_, needle, dataset)
    after = id_floor(moment_ms(since, "--from", now_ms()))
    with Server(target(url, profile)) as server:
        say(f"[dim]following the events of {server.url} (Ctrl-C stops)[/]")
        try:
            while True:
                try:
                    after = _look(server, query, after)
                except ApiError as exc:
                    if exc.status not in (429, 503):
                        raise
                    time.sleep(BUSY_WAIT_S)  # the workspace's runs are at their limit
                time.sleep(TAIL_EVERY_S)
        except KeyboardInterrupt:
            return


def _look(server: Server, query: dict[str, Any], after: str) -> str:
    """Print the events stored after the id ``after``, oldest first; the id to go on from."""
    now = now_ms()
    narrowed = {
        **query,
        "filters": [*query.get("filters", []), {"key": "_id", "operation": ">", "value": after}],
    }
    # Stamped within the last hour or ahead (a client's clock may run fast), as the console.
    body = {"query": narrowed, "from": now - 3_600_000, "to": now + 86_400_001, "limit": TAIL_BATCH}
    events = objects_of(run(server, body), "events", "query run")
    ids = [e["_id"] for e in events if isinstance(e.get("_id"), str)]
    for event in sorted(events, key=lambda e: str(e.get("_id", ""))):
        say(event_line(event))
    return max(ids, default=after)
