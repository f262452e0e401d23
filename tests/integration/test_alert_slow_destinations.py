"""A destination that answers slowly, or never, holds its own delivery for at most the
timeout of each try, and not the other destinations (nor any check: notifications are
sent apart from the checks, test_alert_deliveries.py), nor lets a second evaluator
check or notify the alert again."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from limelight.alerts.check import Notification
from limelight.alerts.destinations import DestinationPolicy, parse_networks
from limelight.alerts.evaluator import Evaluator
from limelight.alerts.messages import CheckFacts
from limelight.alerts.notify import TRIES, Delivery, Notifier, SmtpSettings
from limelight.alerts.service import AlertService
from limelight.settings import Settings
from limelight.store.meta import queries_repo, repos
from limelight.store.meta.alerts_models import Alert, AlertCheck
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow
from limelight.tenant import Tenant
from tests import query_reference as ref
from tests.alert_support import webhook_receiver
from tests.support import migrated_sqlite

TIMEOUT = 0.5
FACTS = CheckFacts(
    Notification.TEST, "a1", "slow", "http://console/alerts/a1", "OK", "OK", "c1",
    0, 0, 60_000, "COUNT", ">", 1.0, [],
)  # fmt: skip


async def _no_sleep(_: float) -> None:
    pass


def _notifier(timeout: float = TIMEOUT) -> Notifier:
    policy = DestinationPolicy(parse_networks("127.0.0.0/8"))
    return Notifier(policy, SmtpSettings(host=None), sleep=_no_sleep, timeout=timeout)


Answer = Callable[[socket.socket], None]


def _drip(conn: socket.socket) -> None:
    """A status line, then a header one byte at a time: every read gets something."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nX-Pad: ")
    while True:
        conn.sendall(b"a")
        time.sleep(0.05)


def _silent(conn: socket.socket) -> None:
    time.sleep(30)


def _endless_body(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000000000\r\n\r\n")
    while True:
        conn.sendall(b"x" * 65536)


@contextmanager
def _server(answer: Answer) -> Iterator[str]:
    listener = socket.create_server(("127.0.0.1", 0), backlog=64)

    def serve(conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                answer(conn)
            except OSError:
                pass  # the notifier hung up

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
    finally:
        listener.close()


def _timed_send(notifier: Notifier, urls: list[str]) -> tuple[list[Delivery], float]:
    """The deliveries and the seconds they took; fails if they take more than 20 s."""
    found: list[list[Delivery]] = []
    destinations = [{"type": "webhook", "url": url} for url in urls]
    started = time.monotonic()
    sending = threading.Thread(
        target=lambda: found.append(notifier.send(destinations, FACTS, "ll_ws_x")), daemon=True
    )
    sending.start()
    sending.join(20)
    assert found, "the notifications still hang after 20 s"
    return found[0], time.monotonic() - started


@pytest.mark.parametrize("answer", [_drip, _silent])
def test_a_destination_answering_slowly_gets_the_timeout_for_each_try(answer: Answer) -> None:
    with _server(answer) as url:
        [delivery], took = _timed_send(_notifier(), [url])
    assert (delivery.ok, delivery.status, delivery.tries) == (False, None, TRIES)
    assert delivery.error == f"the destination did not answer within {TIMEOUT:g} s"
    assert took < TRIES * TIMEOUT + 5  # a busy machine gets some slack


def test_an_answer_is_its_status_however_long_its_body() -> None:
    # A longer timeout than the others: the first try must connect and get the head
    # through, and a machine busy with the rest of the suite can take half a second for
    # that. The body never ends, so any timeout is shorter than it.
    with _server(_endless_body) as url:
        [delivery], took = _timed_send(_notifier(timeout=4 * TIMEOUT), [url])
    assert (delivery.ok, delivery.status, delivery.tries) == (True, 200, 1)
    assert took < 4 * TIMEOUT + 5


def test_twenty_hanging_destinations_take_as_long_as_one() -> None:
    with _server(_silent) as url:
        deliveries, took = _timed_send(_notifier(), [f"{url}{i}" for i in range(20)])
    assert [d.tries for d in deliveries] == [TRIES] * 20
    assert took < TRIES * TIMEOUT + 5  # one after the other: 30 s


def _alert(meta: MetaDB, settings: Settings, hook: str) -> tuple[Tenant, str]:
    """An alert checked every hour, in alarm at once (a COUNT is never below 0)."""
    with meta.session(immediate=True) as s:
        ws = repos.create_workspace(s, "slow-destination")
        tenant = Tenant(ws.id, repos.create_environment(s, ws, "prod", redact=False).id)
        query_id = queries_repo.create_query(
            s, tenant, {"calculations": [{"operator": "COUNT"}]}, "u"
        ).id
    body = {
        "name": "n",
        "query_id": query_id,
        "frequency": "1h",
        "threshold": {"operation": ">", "value": -1},
        "destinations": [{"type": "webhook", "url": hook}],
    }
    return tenant, str(AlertService(settings, meta).create(tenant, body, "u")["id"])


def test_a_slow_destination_lets_no_second_evaluator_check_or_notify_again(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Two evaluators on one metadata database. While the first one's notification waits
    on its destination, the clock moves on 59 minutes, past any lease: the second finds
    nothing due. At the next due time the alert is checked once more, still in alarm,
    and nobody is notified again."""
    meta = migrated_sqlite(tmp_path / "meta.db")
    settings = Settings(data_dir=tmp_path, destination_allow_networks="127.0.0.0/8")
    store = ref.shared_chdb_store(tmp_path_factory)
    clock = [utcnow()]
    first, second = (
        Evaluator(settings, meta, store, clock=lambda: clock[0], owner=owner)
        for owner in ("first", "second")
    )
    try:
        with webhook_receiver() as hooks:
            tenant, alert_id = _alert(meta, settings, hooks.url("/slow"))
            # Due when it was made: a time read before that (a second ahead, as this
            # test did) was passed by a busy machine, and the first tick found nothing due.
            with meta.session() as s:
                due = s.get_one(Alert, alert_id).next_check_at
            assert due is not None
            clock[0] = due
            hooks.answering.clear()
            ticking = threading.Thread(target=first.tick)
            ticking.start()
            assert len(hooks.wait_for("/slow", 1, timeout=60)) == 1  # waiting for its answer
            clock[0] = due + timedelta(minutes=59)
            assert second.tick() == []
            hooks.answering.set()
            ticking.join(20)
            assert first.deliveries.wait_idle(20), "the notification's outcome is not recorded"
            clock[0] = due + timedelta(hours=1)
            [again] = second.tick()
            assert first.tick() == []
            sent = hooks.on("/slow")
    finally:
        first.close(grace=0)
        second.close(grace=0)
    assert (again.alert_id, again.state.value, again.notification) == (alert_id, "ALARM", None)
    assert [r.json()["notification"] for r in sent] == ["firing"]
    with meta.session() as s:
        checks = s.scalars(
            select(AlertCheck).where(AlertCheck.alert_id == alert_id).order_by(AlertCheck.time)
        ).all()
        found = [(c.time, c.state, [n["pending"] for n in c.notifications]) for c in checks]
    meta.dispose()
    # One check per due time; the first one's notification recorded as sent, once.
    assert found == [(due, "ALARM", [False]), (due + timedelta(hours=1), "ALARM", [])]
