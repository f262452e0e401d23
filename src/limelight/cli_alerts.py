"""``limelight alerts ...`` and ``limelight worker``: alerts from the operator's side."""

from __future__ import annotations

import re
import signal
import threading
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from limelight.alerts.service import AlertService, alert_document, check_document
from limelight.errors import ExposedError
from limelight.settings import Settings
from limelight.store.meta import alerts_repo
from limelight.store.meta.db import MetaDB

alerts = typer.Typer(no_args_is_help=True, help="List, show and test alerts.")
console = Console(width=240)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON.")]
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _text(value: object) -> Text:
    """What tenants wrote (names, URLs) or their events hold (group values) as plain
    text: Rich would read "[/]" as markup (and fail), the terminal an escape sequence."""
    return Text(_CONTROL.sub(lambda c: f"\\x{ord(c[0]):02x}", str(value)))


def _field(name: str, value: object) -> Text:
    return Text.assemble((f"{name:<12}", "bold"), " ", _text(value))


def _meta(settings: Settings) -> MetaDB:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    db = MetaDB(settings.resolved_database_url)
    db.migrate()
    return db


def _print_json(value: Any) -> None:
    typer.echo(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(1)


@alerts.command("list")
def alerts_list(as_json: JsonFlag = False) -> None:
    """Every alert of every workspace, with its state."""
    with _meta(Settings()).session() as s:
        rows = [
            {**alert_document(a), "workspaceId": a.workspace_id, "environmentId": a.environment_id}
            for a in alerts_repo.list_alerts(s, None)
        ]
    if as_json:
        _print_json(rows)
        return
    t = Table("id", "name", "state", "checked", "frequency", "environment", header_style="bold")
    for r in rows:
        cells = (r["id"], r["name"], r["state"], r["last_checked_at"] or "never",
                 r["frequency"], r["environmentId"])  # fmt: skip
        t.add_row(*map(_text, cells))
    console.print(t)


@alerts.command("show")
def alerts_show(alert_id: str, as_json: JsonFlag = False) -> None:
    """An alert and its latest checks."""
    try:
        with _meta(Settings()).session() as s:
            alert = alerts_repo.find_alert(s, alert_id)
            doc = alert_document(alert)
            tenant = alerts_repo.tenant_of(alert)
            checks = [
                check_document(c) for c in alerts_repo.list_checks(s, tenant, alert.id, 10, None)
            ]
    except ExposedError as exc:
        raise _fail(exc.reason or exc.message) from None
    if as_json:
        _print_json({"alert": doc, "checks": checks})
        return
    for name in ("id", "name", "state", "query_id", "calculation", "frequency", "window"):
        console.print(_field(name, doc[name]))
    threshold = doc["threshold"]
    console.print(_field("threshold", f"{threshold['operation']} {threshold['value']}"))
    for dest in doc["destinations"]:
        target = dest.get("url") or ", ".join(dest["to"])
        console.print(_field("destination", f"{dest['type']}: {target}"))
    t = Table("time (unix ms)", "state", "values", "notifications", header_style="bold")
    for c in checks:
        values = "; ".join(f"{v['groups'] or 'all'}={v['value']}" for v in c["values"][:5])
        sent = ", ".join(
            f"{n['type']} {'ok' if n['ok'] else n['error']}" for n in c["notifications"]
        )
        t.add_row(*map(_text, (c["time"], c["state"], values, sent)))
    console.print(t)


@alerts.command("test")
def alerts_test(alert_id: str, as_json: JsonFlag = False) -> None:
    """Send a test notification to every destination of the alert; print each outcome."""
    settings = Settings()
    try:
        sent = AlertService(settings, _meta(settings)).send_test(None, alert_id)
    except ExposedError as exc:
        raise _fail(exc.reason or exc.message) from None
    if as_json:
        _print_json(sent)
    for n in sent if not as_json else []:
        outcome = f"ok ({n['status']})" if n["ok"] else f"failed: {n['error']}"
        console.print(_text(f"{n['type']} {n['target']}: {outcome} after {n['tries']} tries"))
    if any(not n["ok"] for n in sent):
        raise typer.Exit(1)


def worker() -> None:
    """Check due alerts until stopped (server mode: beside any number of API processes)."""
    from limelight.alerts.evaluator import Evaluator
    from limelight.store.events import open_event_store

    settings = Settings()
    if settings.events_backend == "chdb":
        raise _fail(
            "limelight worker needs the server mode (LIMELIGHT_EVENTS_BACKEND=clickhouse): "
            "the embedded engine allows one process per data directory, and limelight serve "
            "checks alerts itself"
        )
    meta = _meta(settings)
    events = open_event_store(settings)
    events.start()
    evaluator = Evaluator(settings, meta, events)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    evaluator.start()
    console.print(f"checking alerts as {evaluator.owner}")
    stop.wait()
    evaluator.close()
    events.close()
    meta.dispose()
