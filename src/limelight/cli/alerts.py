"""``limelight alerts ...``: alerts from the operator's side."""

from __future__ import annotations

from typing import Annotated

import typer

from limelight.alerts.service import AlertService, check_document
from limelight.cli.failures import Refused
from limelight.cli.installation import installation
from limelight.cli.output import (
    JsonFlag,
    json_text,
    print_fields,
    print_json,
    print_table,
    safe,
    say,
    when_ms,
)
from limelight.store.meta import alerts_repo

alerts = typer.Typer(no_args_is_help=True, help="List, show and test alerts.")

AlertId = Annotated[str, typer.Argument(help="The alert's id (see alerts list).")]


@alerts.command("list")
def alerts_list(as_json: JsonFlag = False) -> None:
    """Every alert of every workspace, with its state."""
    inst = installation()
    service = AlertService(inst.settings, inst.meta)
    with inst.session() as s:
        rows = [
            {
                **service.document(a),
                "workspaceId": a.workspace_id,
                "environmentId": a.environment_id,
            }
            for a in alerts_repo.list_alerts(s, None)
        ]
    if as_json:
        print_json(rows)
        return
    print_table(
        ["id", "name", "state", "checked", "frequency", "environment"],
        [
            [
                r["id"],
                r["name"],
                r["state"],
                r["last_checked_at"] or "never",
                r["frequency"],
                r["environmentId"],
            ]  # fmt: skip
            for r in rows
        ],
    )


@alerts.command("show")
def alerts_show(alert_id: AlertId, as_json: JsonFlag = False) -> None:
    """An alert and its latest checks."""
    inst = installation()
    service = AlertService(inst.settings, inst.meta)
    with inst.session() as s:
        alert = alerts_repo.find_alert(s, alert_id)
        doc = service.document(alert)
        tenant = alerts_repo.tenant_of(alert)
        found = alerts_repo.list_checks(s, tenant, alert.id, 10, None)
        checks = [check_document(c, service.sealer) for c in found]
    if as_json:
        print_json({"alert": doc, "checks": checks})
        return
    names = ("id", "name", "state", "query_id", "calculation", "frequency", "window")
    fields = [(name, doc[name]) for name in (*names, "last_checked_at")]
    threshold = doc["threshold"]
    fields.append(("threshold", f"{threshold['operation']} {json_text(threshold['value'])}"))
    for dest in doc["destinations"]:
        fields.append(
            ("destination", f"{dest['type']}: {dest.get('url') or ', '.join(dest['to'])}")
        )
    print_fields(fields)
    if not checks:
        return
    say("")
    rows = []
    for c in checks:
        values = "; ".join(
            f"{json_text(v['groups']) if v['groups'] else 'all'}={json_text(v['value'])}"
            for v in c["values"][:5]
        )
        sent = ", ".join(
            f"{n['type']} {'ok' if n['ok'] else 'pending' if n.get('pending') else n['error']}"
            for n in c["notifications"]
        )
        rows.append([when_ms(c["time"]), c["state"], values, sent])
    print_table(["time", "state", "values", "notifications"], rows)


@alerts.command("test")
def alerts_test(alert_id: AlertId, as_json: JsonFlag = False) -> None:
    """Send a test notification to every destination of the alert; print each outcome.

    Exits 1 when a destination did not take it."""
    inst = installation()
    sent = AlertService(inst.settings, inst.meta).send_test(None, alert_id)
    if as_json:
        print_json(sent)
    else:
        for n in sent:
            outcome = f"ok ({n['status']})" if n["ok"] else f"failed: {n['error']}"
            say(safe(f"{n['type']} {n['target']}: {outcome} after {n['tries']} tries"))
    failed = [n for n in sent if not n["ok"]]
    if failed:
        raise Refused(f"{len(failed)} of {len(sent)} destinations did not take the notification")
