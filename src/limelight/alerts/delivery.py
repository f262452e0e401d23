"""Notifications, sent apart from the checks that decide them.

A destination that accepts a connection and never answers holds its delivery
for 3 tries of 10 s (``Notifier.longest_seconds``, 33 s). Sent inside the
checks, that held one of the evaluator's 2 check threads as long: one
workspace's 6 alerts with 20 such webhooks each kept another workspace's new
alert unchecked for 32.5 s. A check now records its notification as pending and
hands it here; its thread goes on to the next check at once.

The deliveries are tasks on one event loop, in a thread of its own: a hanging
destination costs a socket and a coroutine, not a thread. What one workspace
may have waiting or being sent is bounded (``alert_deliveries_per_workspace``,
each destination counts, per evaluator): past it a destination is not sent, and
the check records it so, saying why, as the per-minute quota does. At most
``SENDING_AT_ONCE`` destinations are being sent to at once, which bounds the
connections a process holds; a notification waits for room for all of its
destinations. A workspace holds at most its bound of that room: with the
defaults, 13 workspaces whose destinations all hang fill it, and the others'
notifications wait (at most 33 s) for room, their checks still on time.

Once a notification's destinations have answered (or not), their outcomes
replace the pending ones in the check's history. When none was reached, the
alert's last notification is put back, so that its next check sends it again.
The queue is in memory: a stopping evaluator gives what it holds
``GRACE_SECONDS``, then records the rest as not sent; a process killed outright
leaves them pending in the history.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from limelight import metrics
from limelight.alerts.messages import CheckFacts
from limelight.alerts.notify import Delivery, Notifier, report
from limelight.auth.alert_secrets import seal_delivery
from limelight.auth.sealing import Sealer
from limelight.store.meta import alerts_repo as repo
from limelight.store.meta.db import MetaDB

log = logging.getLogger("limelight.alerts")

# Destinations being sent to at once: the connections (and sockets) notifications hold.
SENDING_AT_ONCE = 512
# How long a stopping evaluator waits for the notifications it holds.
GRACE_SECONDS = 5.0
STOPPED = "not sent: the evaluator stopped before it was sent"
BROKEN = "not sent: an internal error of the server"


@dataclass(frozen=True)
class Outgoing:
    """One notification of a recorded check: the destinations admitted, and where their
    outcomes go."""

    workspace_id: str
    check_id: str
    facts: CheckFacts
    secret: str
    notifier: Notifier
    recorded: list[Delivery]  # the check's notifications, in its destinations' order
    sending: list[tuple[int, dict[str, Any]]]  # (place in ``recorded``, destination)
    # When the check marked the alert notified, and what that replaced (put back when
    # no destination is reached). None: the check did not mark it.
    notified_at: datetime | None
    previous: tuple[str | None, datetime | None]

    def outcome(self, sent: Sequence[Delivery]) -> list[Delivery]:
        """The check's notifications with the outcomes of those sent."""
        out = list(self.recorded)
        for (place, _), delivery in zip(self.sending, sent, strict=True):
            out[place] = delivery
        return out

    def not_sent(self, why: str) -> list[Delivery]:
        return [
            replace(self.recorded[place], pending=False, error=why) for place, _ in self.sending
        ]


class Room:
    """Places for destinations being sent to; a notification takes all of its own at once
    (one place at a time, notifications each holding some could wait on each other)."""

    def __init__(self, places: int) -> None:
        self.free = places
        self._changed = asyncio.Condition()

    @asynccontextmanager
    async def taken(self, places: int) -> AsyncIterator[None]:
        async with self._changed:
            await self._changed.wait_for(lambda: self.free >= places)
            self.free -= places
        try:
            yield
        finally:
            async with self._changed:
                self.free += places
                self._changed.notify_all()


class Deliveries:
    """The evaluator's notifications in flight, per workspace within its bound."""

    def __init__(self, meta: MetaDB, per_workspace: int, sealer: Sealer) -> None:
        self._meta = meta
        self._sealer = sealer  # outcomes are stored with their targets sealed
        self.per_workspace = per_workspace
        self._in_flight: Counter[str] = Counter()  # destinations, by workspace
        self._changed = threading.Condition()
        self._starting = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self._tasks: set[asyncio.Task[None]] = set()  # touched on the loop only
        self._room = Room(SENDING_AT_ONCE)  # made again for each loop

    # -- the checks' side -----------------------------------------------------------------

    def admit(self, workspace_id: str, wanted: int) -> int:
        """How many of ``wanted`` destinations the workspace may send now (reserved until
        they are sent, or ``forgo`` returns them)."""
        with self._changed:
            granted = max(0, min(wanted, self.per_workspace - self._in_flight[workspace_id]))
            if granted:
                self._in_flight[workspace_id] += granted
        metrics.NOTIFICATIONS_IN_FLIGHT.inc(granted)
        return granted

    def forgo(self, workspace_id: str, count: int) -> None:
        """Give back admitted destinations that will not be sent."""
        if count <= 0:
            return
        with self._changed:
            self._in_flight[workspace_id] -= count
            if self._in_flight[workspace_id] <= 0:
                del self._in_flight[workspace_id]
            self._changed.notify_all()
        metrics.NOTIFICATIONS_IN_FLIGHT.dec(count)

    def send(self, outgoing: Outgoing) -> None:
        """Send a recorded check's notification, in the background."""
        with self._starting:
            loop = self._loop or self._start()
            loop.call_soon_threadsafe(self._spawn, outgoing)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no notification is waiting or being sent; False if some still are
        after ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._in_flight, timeout)

    def close(self, grace: float = GRACE_SECONDS) -> None:
        """Give the notifications in flight ``grace`` seconds, then record the others as
        not sent and stop."""
        if self._thread is None:
            return
        self.wait_idle(grace)
        with self._starting:
            loop, thread, stop = self._loop, self._thread, self._stop
            self._loop = self._thread = self._stop = None
        if loop is None or thread is None or stop is None:
            return
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=60)

    # -- the loop -------------------------------------------------------------------------

    def _start(self) -> asyncio.AbstractEventLoop:
        ready = threading.Event()
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._main(ready)), name="alert-delivery", daemon=True
        )
        self._thread.start()
        ready.wait()
        assert self._loop is not None
        return self._loop

    async def _main(self, ready: threading.Event) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = stop = asyncio.Event()
        self._room = Room(SENDING_AT_ONCE)
        ready.set()
        await stop.wait()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _spawn(self, outgoing: Outgoing) -> None:
        task = asyncio.get_running_loop().create_task(self._deliver(outgoing))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, out: Outgoing) -> None:
        try:
            try:
                destinations = [d for _, d in out.sending]
                async with self._room.taken(len(destinations)):
                    sent = await out.notifier.deliver(destinations, out.facts, out.secret)
            except asyncio.CancelledError:  # the evaluator stops
                sent = out.not_sent(STOPPED)
                report(out.facts, sent)
            except Exception:
                log.exception("alert %s: sending its notification failed", out.facts.alert_id)
                sent = out.not_sent(BROKEN)
                report(out.facts, sent)
            await asyncio.to_thread(self._record, out, out.outcome(sent))
        except Exception:
            log.exception(
                "alert %s: its notifications' outcome was not recorded", out.facts.alert_id
            )
        finally:
            self.forgo(out.workspace_id, len(out.sending))

    def _record(self, out: Outgoing, outcome: list[Delivery]) -> None:
        with self._meta.connection(immediate=True) as c:
            repo.record_deliveries(
                c, out.check_id, [seal_delivery(self._sealer, d.to_json()) for d in outcome]
            )
            if out.notified_at is not None and not any(d.ok for d in outcome):
                repo.unmark_notified(c, out.facts.alert_id, out.notified_at, *out.previous)
