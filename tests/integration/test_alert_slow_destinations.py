"""A destination that answers slowly, or never, holds its own delivery for at most the
timeout of each try, and not the other destinations (nor any check: notifications are
sent apart from the checks, test_alert_deliveries.py)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from limelight.alerts.check import Notification
from limelight.alerts.destinations import DestinationPolicy, parse_networks
from limelight.alerts.evaluator import Evaluator
from limelight.alerts.messages import CheckFacts
from limelight.alerts.notify import TRIES, Delivery, Notifier, SmtpSettings
from limelight.settings import Settings
from limelight.store.meta.db import MetaDB

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


def test_the_lease_outlasts_the_checks_claimed_with_it(tmp_path: Path) -> None:
    """A tick claims 4 alerts per thread at once; the last of them starts after three
    others, each with its 3 statements at their time limits. Notifications are sent
    once a check is recorded, outside its lease."""
    meta = MetaDB(f"sqlite:///{tmp_path / 'meta.db'}")  # not opened
    for seconds in (10.0, 120.0):
        settings = Settings(data_dir=tmp_path, query_max_run_seconds=seconds)
        evaluator = Evaluator(settings, meta, events=None)  # type: ignore[arg-type]
        assert evaluator.lease.total_seconds() >= 4 * 3 * seconds
