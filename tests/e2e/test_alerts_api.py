"""The Alerts API end to end: a live server checks the alert, a real webhook receiver
and SMTP server get the notifications, and the Queries API keeps what alerts watch."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import web
from tests.alert_support import (
    Mailbox,
    SilentDestination,
    WebhookReceiver,
    silent_destination,
    smtp_server,
    webhook_receiver,
)
from tests.e2e import test_metrics as metrics
from tests.support import LiveServer, Tenant, launch, within_one_window

P99_BY_SERVICE = {
    "name": "latency",
    "calculations": [{"operator": "P99", "key": "duration"}],
    "group_bys": [{"key": "service"}],
}


@pytest.fixture(scope="module")
def receivers() -> Iterator[tuple[WebhookReceiver, Mailbox]]:
    with webhook_receiver() as hooks, smtp_server() as mail:
        yield hooks, mail


@pytest.fixture(scope="module")
def alerting_server(
    tmp_path_factory: pytest.TempPathFactory, receivers: tuple[WebhookReceiver, Mailbox]
) -> Iterator[LiveServer]:
    _, mail = receivers
    server = launch(
        tmp_path_factory.mktemp("alerts"),
        {
            "LIMELIGHT_DESTINATION_ALLOW_NETWORKS": "127.0.0.0/8",
            "LIMELIGHT_SMTP_HOST": "127.0.0.1",
            "LIMELIGHT_SMTP_PORT": str(mail.port),
            "LIMELIGHT_SMTP_STARTTLS": "false",
        },
    )
    yield server
    server.stop()


class Api:
    def __init__(self, server: LiveServer, key: str) -> None:
        self.client = web.Client(base_url=server.url, headers={"Authorization": key}, timeout=30)

    def post(self, path: str, body: Any) -> httpx.Response:
        return self.client.post(path, json=body)

    def put(self, path: str, body: Any) -> httpx.Response:
        return self.client.put(path, json=body)


def _query(api: Api) -> str:
    r = api.post("/v1/queries", P99_BY_SERVICE)
    assert r.status_code == 200, r.text
    return str(r.json()["query"]["id"])


def _send(server: LiveServer, tenant: Tenant, service: str, duration: int) -> None:
    events = [{"service": service, "duration": duration, "message": "done"} for _ in range(3)]
    assert server.send(tenant.ingest_key, "requests", events).status_code == 202


def _recorded(api: Api, alert_id: str, state: str) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while (shown := api.client.get(f"/v1/alerts/{alert_id}").json()["alert"])["state"] != state:
        assert time.monotonic() < deadline, shown
        time.sleep(0.05)
    return dict(shown)


def test_an_alert_fires_resolves_and_keeps_its_history(
    alerting_server: LiveServer, receivers: tuple[WebhookReceiver, Mailbox]
) -> None:
    server, (hooks, mail) = alerting_server, receivers
    tenant = server.new_tenant()
    api = Api(server, tenant.admin_key)
    _send(server, tenant, "checkout", 900)
    _send(server, tenant, "search", 100)
    query_id = _query(api)
    hook = f"/hook-{tenant.workspace_id}"
    created = api.post(
        "/v1/alerts",
        {
            "name": "slow checkouts",
            "query_id": query_id,
            "threshold": {"operation": ">", "value": 500},
            "frequency": "1m",
            "window": "5m",
            "destinations": [
                {"type": "webhook", "url": hooks.url(hook)},
                {"type": "email", "to": ["oncall@example.com"]},
            ],
        },
    )
    assert created.status_code == 200, created.text
    alert = created.json()["alert"]
    assert set(alert) == {"id", "webhook_secret"} and alert["webhook_secret"].startswith("ll_ws_")

    [firing] = hooks.wait_for(hook, 1, timeout=20)  # the first check is due at once
    assert firing.signed_by(alert["webhook_secret"])
    body = firing.json()
    assert (body["state"], body["previous_state"], body["notification"]) == (
        "ALARM",
        "OK",
        "firing",
    )
    assert sorted(body["check"]["values"], key=lambda v: v["value"]) == [
        {"groups": {"service": "search"}, "value": 100, "alarm": False},
        {"groups": {"service": "checkout"}, "value": 900, "alarm": True},
    ]
    assert body["check"]["to"] - body["check"]["from"] == 300_000
    [mail_in] = mail.wait_for(1)
    assert mail_in["Subject"].startswith("[FIRING] slow checkouts")

    shown = _recorded(api, alert["id"], "ALARM")  # the check is recorded after it notifies
    assert "webhook_secret" not in shown
    assert shown["window"] == "5m" and shown["calculation"] == "P99(duration)"

    # A changed alert is checked again at once: over its new threshold nothing is slow.
    changed = api.put(f"/v1/alerts/{alert['id']}", {"threshold": {"operation": ">", "value": 1000}})
    assert changed.status_code == 200
    assert changed.json()["alert"]["threshold"] == {"operation": ">", "value": 1000}
    assert changed.json()["alert"]["name"] == "slow checkouts"
    resolved = hooks.wait_for(hook, 2, timeout=20)[-1].json()
    assert (resolved["state"], resolved["previous_state"], resolved["notification"]) == (
        "OK",
        "ALARM",
        "resolved",
    )
    _recorded(api, alert["id"], "OK")
    checks = api.client.get(f"/v1/alerts/{alert['id']}/checks").json()["checks"]
    assert [(c["state"], c["previous_state"]) for c in checks] == [("OK", "ALARM"), ("ALARM", "OK")]
    assert checks[1]["notifications"][0] == {
        "type": "webhook",
        "target": hooks.url(hook),
        "ok": True,
        "status": 200,
        "error": None,
        "tries": 1,
        "pending": False,
    }
    older = api.client.get(f"/v1/alerts/{alert['id']}/checks", params={"before": checks[0]["time"]})
    assert [c["id"] for c in older.json()["checks"]] == [checks[1]["id"]]
    listed = api.client.get("/v1/alerts").json()["alerts"]
    assert [a["id"] for a in listed] == [alert["id"]]


def test_an_operator_sees_each_notification_and_each_change_of_state(
    tmp_path: Path, receivers: tuple[WebhookReceiver, Mailbox]
) -> None:
    """A server of its own, so that its counts are this test's alone."""
    hooks, _ = receivers
    server = launch(tmp_path / "data", {"LIMELIGHT_DESTINATION_ALLOW_NETWORKS": "127.0.0.0/8"})
    try:
        tenant = server.new_tenant()
        api = Api(server, tenant.admin_key)
        _send(server, tenant, "checkout", 900)
        up, down = f"/up-{tenant.workspace_id}", f"/down-{tenant.workspace_id}"
        hooks.fail[down] = 3  # every try of the notification
        alert_id = api.post(
            "/v1/alerts",
            {
                "name": "slow checkouts",
                "query_id": _query(api),
                "threshold": {"operation": ">", "value": 500},
                "destinations": [
                    {"type": "webhook", "url": hooks.url(up)},
                    {"type": "webhook", "url": hooks.url(down)},
                ],
            },
        ).json()["alert"]["id"]
        deadline = time.monotonic() + 30
        while not (sent := _notifications_sent(api, alert_id)):
            assert time.monotonic() < deadline, "the notification's outcomes are not recorded"
            time.sleep(0.1)
        assert [(n["ok"], n["status"], n["tries"]) for n in sent] == [
            (True, 200, 1),
            (False, 503, 3),
        ]
        samples = metrics.scrape(server)
        outcomes = {
            outcome: metrics.value(
                samples, "limelight_notifications_total", kind="webhook", outcome=outcome
            )
            for outcome in ("delivered", "failed", "dropped")
        }
        assert outcomes == {"delivered": 1, "failed": 1, "dropped": 0}
        assert metrics.value(samples, "limelight_notifications_in_flight") == 0
        logged = server.log_path.read_text()
    finally:
        server.stop()
    assert f"alert {alert_id} of workspace {tenant.workspace_id}: OK -> ALARM" in logged
    notification = f"alert {alert_id}: firing notification to a webhook destination"
    assert f"{notification} delivered (status 200, 1 try)" in logged
    assert f"{notification} failed (status 503, 3 tries: the destination answered 503)" in logged
    assert up not in logged and down not in logged  # an address can be a credential


def _notifications_sent(api: Api, alert_id: str) -> list[dict[str, Any]]:
    """The notifications of the alert's latest check, once none is pending."""
    checks = api.client.get(f"/v1/alerts/{alert_id}/checks").json()["checks"]
    sent = checks[0]["notifications"] if checks else []
    return [] if any(n["pending"] for n in sent) else list(sent)


def test_a_query_an_alert_watches_keeps_what_it_watches(alerting_server: LiveServer) -> None:
    server = alerting_server
    tenant = server.new_tenant()
    api = Api(server, tenant.admin_key)
    query_id = _query(api)
    alert_id = api.post(
        "/v1/alerts",
        {"name": "p99 watch", "query_id": query_id, "threshold": {"operation": ">", "value": 1}},
    ).json()["alert"]["id"]

    deleted = api.client.delete(f"/v1/queries/{query_id}")
    assert deleted.status_code == 403
    assert alert_id in deleted.json()["message"] and "p99 watch" in deleted.json()["message"]
    for change in ({"calculations": [{"operator": "COUNT"}]}, {"calculations": []}):
        refused = api.put(f"/v1/queries/{query_id}", change)
        assert refused.status_code == 400
        [error] = refused.json()["errors"]
        assert error["field"] == "calculations" and alert_id in error["message"]
    # Adding a calculation is fine; so is deleting the query once the alert is gone.
    more = P99_BY_SERVICE["calculations"] + [{"operator": "COUNT"}]  # type: ignore[operator]
    assert api.put(f"/v1/queries/{query_id}", {"calculations": more}).status_code == 200
    assert api.client.delete(f"/v1/alerts/{alert_id}").json() == {"alert": {"id": alert_id}}
    assert api.client.delete(f"/v1/queries/{query_id}").status_code == 200


def test_bad_alerts_get_400_naming_each_field(alerting_server: LiveServer) -> None:
    tenant = alerting_server.new_tenant()
    api = Api(alerting_server, tenant.admin_key)
    query_id = _query(api)
    r = api.post(
        "/v1/alerts",
        {
            "query_id": query_id,
            "threshold": {"operation": "~", "value": 1},
            "frequency": "30s",
            "window": "8d",
            "destinations": [
                {"type": "webhook", "url": "http://169.254.169.254/latest"},
                {"type": "pager", "url": "x"},
                {"type": "email", "to": ["not-an-address", "a@=?utf-8?q?b.c=0D=0ABcc:=20x?=.c"]},
            ],
        },
    )
    assert r.status_code == 400
    fields = {e["field"] for e in r.json()["errors"]}
    assert fields == {"threshold.operation", "destinations[1]"}  # the shape first
    r = api.post(
        "/v1/alerts",
        {
            "query_id": query_id,
            "threshold": {"operation": ">", "value": 1},
            "frequency": "30s",
            "window": "8d",
            "destinations": [
                {"type": "webhook", "url": "http://169.254.169.254/latest"},
                {"type": "email", "to": ["not-an-address", "a@=?utf-8?q?b.c=0D=0ABcc:=20x?=.c"]},
            ],
        },
    )
    assert r.status_code == 400
    assert {e["field"]: e["message"] for e in r.json()["errors"]} == {
        "frequency": "from 1m to 1d",
        "window": "from 1m to 7d",
        "destinations[0].url": "the address 169.254.169.254 is in a loopback, private, "
        "link-local or reserved range; the operator can allow it with "
        "LIMELIGHT_DESTINATION_ALLOW_NETWORKS",
        "destinations[1].to[0]": "not an email address",
        "destinations[1].to[1]": "not an email address",  # an encoded word: Bcc injected
    }
    missing = api.post("/v1/alerts", {"threshold": {"operation": ">", "value": 1}})
    assert {e["field"] for e in missing.json()["errors"]} == {"name", "query_id"}
    wrong_calc = api.post(
        "/v1/alerts",
        {
            "name": "x",
            "query_id": query_id,
            "calculation": "AVG(duration)",
            "threshold": {"operation": ">", "value": 1},
        },
    )
    assert wrong_calc.json()["errors"] == [
        {"field": "calculation", "message": "not a calculation of the query; one of: P99(duration)"}
    ]
    # A heatmap is a distribution, no number for a threshold: no alert watches one.
    heatmap = api.post(
        "/v1/queries",
        {
            "name": "latency map",
            "calculations": [
                {"operator": "HEATMAP", "key": "duration"},
                {"operator": "P99", "key": "duration"},
            ],
        },
    ).json()["query"]["id"]
    on_heatmap = api.post(
        "/v1/alerts",
        {
            "name": "x",
            "query_id": heatmap,
            "calculation": "HEATMAP(duration)",
            "threshold": {"operation": ">", "value": 1},
        },
    )
    assert on_heatmap.json()["errors"] == [
        {"field": "calculation", "message": "not a calculation of the query; one of: P99(duration)"}
    ]
    no_calc = api.post("/v1/queries", {"name": "plain"}).json()["query"]["id"]
    refused = api.post(
        "/v1/alerts",
        {"name": "x", "query_id": no_calc, "threshold": {"operation": ">", "value": 1}},
    )
    assert refused.json()["errors"] == [
        {"field": "query_id", "message": "the query has no calculation to watch"}
    ]
    assert api.client.post("/v1/alerts", content=b"{nope").status_code == 400


def test_thresholds_beyond_64_bits_read_back(alerting_server: LiveServer) -> None:
    """A threshold is a double: one beyond 2**53 reads back as the double it is stored as,
    not as an integer too large for JSON encoders."""
    api = Api(alerting_server, alerting_server.new_tenant().admin_key)
    query_id = _query(api)
    for value, shown in ((18446744073709551615, 1.8446744073709552e19), (1e20, 1e20)):
        body = {"name": "x", "query_id": query_id, "threshold": {"operation": ">", "value": value}}
        created = api.post("/v1/alerts", body)
        assert created.status_code == 200, created.text
        alert_id = created.json()["alert"]["id"]
        read = api.client.get(f"/v1/alerts/{alert_id}")
        assert read.status_code == 200, read.text
        assert read.json()["alert"]["threshold"] == {"operation": ">", "value": shown}
        changed = api.put(
            f"/v1/alerts/{alert_id}", {"threshold": {"operation": "<", "value": value}}
        )
        assert changed.status_code == 200, changed.text
    assert api.client.get("/v1/alerts").status_code == 200


def test_checks_before_any_time_the_api_allows(alerting_server: LiveServer) -> None:
    api = Api(alerting_server, alerting_server.new_tenant().admin_key)
    alert_id = api.post(
        "/v1/alerts",
        {"name": "x", "query_id": _query(api), "threshold": {"operation": ">", "value": 1}},
    ).json()["alert"]["id"]
    for before in (2**53, 253402300800000, 0):
        answer = api.client.get(f"/v1/alerts/{alert_id}/checks", params={"before": before})
        assert answer.status_code == 200, (before, answer.text)
    too_late = api.client.get(f"/v1/alerts/{alert_id}/checks", params={"before": 2**53 + 1})
    assert too_late.status_code == 400


def test_keys_and_tenants(alerting_server: LiveServer) -> None:
    server = alerting_server
    mine, theirs = server.new_tenant(), server.new_tenant()
    api = Api(server, mine.admin_key)
    query_id = _query(api)
    alert_id = api.post(
        "/v1/alerts",
        {"name": "x", "query_id": query_id, "threshold": {"operation": ">", "value": 1}},
    ).json()["alert"]["id"]
    url = f"{server.url}/v1/alerts/{alert_id}"
    assert web.get(url).status_code == 401
    assert web.get(url, headers={"Authorization": mine.ingest_key}).status_code == 403
    other = Api(server, theirs.admin_key)
    for answer in (
        other.client.get(url),
        other.put(url, {"name": "mine now"}),
        other.client.delete(url),
        other.client.get(f"{url}/checks"),
        other.client.post(f"{url}/test"),
    ):
        assert answer.status_code == 404
    assert other.client.get("/v1/alerts").json() == {"alerts": []}
    # Their query cannot be watched from here either.
    theirs_query = _query(other)
    r = api.post(
        "/v1/alerts",
        {"name": "x", "query_id": theirs_query, "threshold": {"operation": ">", "value": 1}},
    )
    assert r.json()["errors"] == [
        {"field": "query_id", "message": "no saved query with this id here"}
    ]
    assert api.client.get(url).json()["alert"]["name"] == "x"


def test_a_test_notification_reaches_every_destination(
    alerting_server: LiveServer, receivers: tuple[WebhookReceiver, Mailbox]
) -> None:
    hooks, _ = receivers
    tenant = alerting_server.new_tenant()
    api = Api(alerting_server, tenant.admin_key)
    query_id = _query(api)
    hook = f"/test-{tenant.workspace_id}"
    alert_id = api.post(
        "/v1/alerts",
        {
            "name": "x",
            "query_id": query_id,
            "threshold": {"operation": ">", "value": 10_000},
            "enabled": False,
            "destinations": [{"type": "slack", "url": hooks.url(hook)}],
        },
    ).json()["alert"]["id"]
    sent = api.client.post(f"/v1/alerts/{alert_id}/test").json()["notifications"]
    assert [(n["type"], n["ok"], n["status"]) for n in sent] == [("slack", True, 200)]
    [message] = hooks.wait_for(hook, 1)
    assert message.json()["text"].startswith("[TEST] x")
    # A disabled alert is never checked: an enabled sibling made after it is checked at
    # once, so once the sibling has a check the evaluator has passed over this one.
    sibling = api.post(
        "/v1/alerts",
        {"name": "sibling", "query_id": query_id, "threshold": {"operation": ">", "value": 1}},
    ).json()["alert"]["id"]
    deadline = time.monotonic() + 30
    while not api.client.get(f"/v1/alerts/{sibling}/checks").json()["checks"]:
        assert time.monotonic() < deadline, "the enabled sibling was never checked"
        time.sleep(0.05)
    assert api.client.get(f"/v1/alerts/{alert_id}/checks").json() == {"checks": []}


def test_the_command_line_lists_shows_and_tests_alerts(
    alerting_server: LiveServer, receivers: tuple[WebhookReceiver, Mailbox]
) -> None:
    hooks, _ = receivers
    server = alerting_server
    tenant = server.new_tenant()
    api = Api(server, tenant.admin_key)
    hook = f"/cli-{tenant.workspace_id}"
    hooks.fail[f"{hook}-down"] = 10
    alert_id = api.post(
        "/v1/alerts",
        {
            "name": "cli watch",
            "query_id": _query(api),
            "threshold": {"operation": ">", "value": 10_000},
            "destinations": [{"type": "webhook", "url": hooks.url(hook)}],
        },
    ).json()["alert"]["id"]
    _recorded(api, alert_id, "NO_DATA")  # its first check has run
    listed = {a["id"]: a for a in server.cli_json("alerts", "list")}
    assert listed[alert_id]["name"] == "cli watch"
    assert listed[alert_id]["workspaceId"] == tenant.workspace_id
    shown = server.cli_json("alerts", "show", alert_id)
    assert shown["alert"]["state"] == "NO_DATA" and shown["checks"][0]["state"] == "NO_DATA"
    assert "ok (200) after 1 tries" in server.cli("alerts", "test", alert_id)
    assert hooks.wait_for(hook, 1)[0].json()["notification"] == "test"

    api.put(
        f"/v1/alerts/{alert_id}",
        {"destinations": [{"type": "webhook", "url": hooks.url(f"{hook}-down")}]},
    )
    with pytest.raises(RuntimeError, match="failed: the destination answered 503"):
        server.cli("alerts", "test", alert_id)
    with pytest.raises(RuntimeError, match="needs the server mode"):
        server.cli("worker")


def test_the_command_line_prints_names_and_event_values_as_text(
    alerting_server: LiveServer, receivers: tuple[WebhookReceiver, Mailbox]
) -> None:
    """Alert names (any tenant's) and group values (any event's) are printed as they
    are: not read as Rich markup (where "[/]" stopped the command), and without the
    terminal's escape sequences."""
    hooks, _ = receivers
    server = alerting_server
    tenant = server.new_tenant()
    api = Api(server, tenant.admin_key)
    service = "[/][link=https://evil.example]svc\x1b]0;title\x07"
    _send(server, tenant, service, 900)
    name = "[/] [bold red]cli markup"
    alert_id = api.post(
        "/v1/alerts",
        {
            "name": name,
            "query_id": _query(api),
            "threshold": {"operation": ">", "value": 500},
            "destinations": [
                {"type": "webhook", "url": hooks.url(f"/markup-{tenant.workspace_id}")}
            ],
        },
    ).json()["alert"]["id"]
    _recorded(api, alert_id, "ALARM")
    assert name in server.cli("alerts", "list")
    shown = server.cli("alerts", "show", alert_id)
    assert name in shown
    assert "[/][link=https://evil.example]svc" in shown and "\x1b" not in shown
    tested = server.cli("alerts", "test", alert_id)
    assert "ok (200)" in tested


@pytest.fixture()
def silent() -> Iterator[SilentDestination]:
    """A destination that accepts connections and never answers."""
    with silent_destination() as destination:
        yield destination


def test_test_notifications_to_a_silent_destination_hold_up_no_one_else(
    alerting_server: LiveServer, silent: SilentDestination
) -> None:
    """Each test notification waits up to 3 x 10 s on a destination that never answers:
    while it waits it holds none of the server's worker threads, which every tenant's
    requests need; and a workspace sends at most 10 test notifications a minute."""
    server = alerting_server
    mine, theirs = server.new_tenant(), server.new_tenant()
    api = Api(server, mine.admin_key)
    alert_id = api.post(
        "/v1/alerts",
        {
            "name": "silent",
            "query_id": _query(api),
            "threshold": {"operation": ">", "value": 1},
            "enabled": False,
            "destinations": [{"type": "webhook", "url": silent.url()}],
        },
    ).json()["alert"]["id"]
    answers: list[int] = []

    def test_it() -> None:
        try:
            with web.Client(headers={"Authorization": mine.admin_key}, timeout=60) as c:
                answers.append(c.post(f"{server.url}/v1/alerts/{alert_id}/test").status_code)
        except httpx.HTTPError:
            pass

    within_one_window(10)
    for _ in range(60):
        threading.Thread(target=test_it, daemon=True).start()
    assert silent.wait_for(10, timeout=30) == 10  # 10 tests are waiting on the destination
    other = Api(server, theirs.admin_key)
    assert other.client.get("/v1/alerts").status_code == 200
    # Answered while those 10 still wait: none of them has an answer yet.
    assert [a for a in answers if a != 429] == []
    deadline = time.monotonic() + 10
    while answers.count(429) < 50 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert answers.count(429) == 50  # 10 a minute per workspace; the others wait on


def test_alerts_show_prints_groups_and_values_as_json(
    alerting_server: LiveServer, receivers: tuple[WebhookReceiver, Mailbox]
) -> None:
    hooks, _ = receivers
    server = alerting_server
    tenant = server.new_tenant()
    api = Api(server, tenant.admin_key)
    _send(server, tenant, 'say "hi"', 900)
    alert_id = api.post(
        "/v1/alerts",
        {
            "name": "json values",
            "query_id": _query(api),
            "threshold": {"operation": ">", "value": 500.5},
            "destinations": [{"type": "webhook", "url": hooks.url(f"/json-{tenant.workspace_id}")}],
        },
    ).json()["alert"]["id"]
    _recorded(api, alert_id, "ALARM")
    shown = server.cli("alerts", "show", alert_id)
    assert "threshold       > 500.5" in shown
    assert '{"service":"say \\"hi\\""}=900' in shown, shown
    assert "{'" not in shown and "None" not in shown and "True" not in shown
