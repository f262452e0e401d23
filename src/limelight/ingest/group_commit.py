"""Small batches sharing one INSERT (group commit).

An INSERT costs the engine a part, a sync to disk and a pass of the paths view
whatever its size: 10-event requests from 64 clients went in at 770 events/s
one INSERT each, where the same events in 1,000-event batches go in at 20k/s.
So a batch waits while every insert slot is busy, and whoever frees a slot
takes every waiting batch of the same day (up to ``MAX_GROUP_ROWS``) into one
INSERT; each request is answered once its rows are written, as before. There is
no timer: a batch that finds a slot free goes at once, so a lone client waits
for nothing, and the busier the engine, the larger the groups.

A group holds the rows of several requests and tenants; every row carries its
own tenant (``encode_batches``), and all of one day's rows make one part, which
the engine commits whole or not at all. When the group's INSERT fails, each of
its batches is tried alone, so one request's bad rows fail that request only.
Batches of ``ALONE_ROWS`` or more, or spanning days, are already large and go alone.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from limelight.store.events.base import EventRow, EventStore
from limelight.tenant import Tenant

DAY_MS = 86_400_000
ALONE_ROWS = 5_000
MAX_GROUP_ROWS = 20_000
# As many INSERTs at once as the embedded store has insert sessions (chdb_store).
SLOTS = 2


@dataclass(slots=True)
class _Waiting:
    tenant: Tenant
    rows: Sequence[EventRow]
    day: int
    done: bool = False
    error: BaseException | None = None


class GroupCommit:
    """``insert`` as the store's, with concurrent small batches written together."""

    def __init__(self, store: EventStore, slots: int = SLOTS) -> None:
        self._store = store
        self._free = slots
        self._waiting: list[_Waiting] = []
        self._changed = threading.Condition(threading.Lock())

    def insert(self, tenant: Tenant, rows: Sequence[EventRow]) -> None:
        if not rows:
            return
        days = {r.timestamp_ms // DAY_MS for r in rows}
        if len(rows) >= ALONE_ROWS or len(days) > 1:
            self._store.insert(tenant, rows)
            return
        mine = _Waiting(tenant, rows, days.pop())
        with self._changed:
            self._waiting.append(mine)
            while not mine.done:
                if not self._free or not self._waiting:  # mine may be in another's group
                    self._changed.wait()
                    continue
                group = self._take()
                self._free -= 1
                self._changed.release()
                try:
                    self._write(group)
                finally:
                    self._changed.acquire()
                    self._free += 1
                    self._changed.notify_all()
        if mine.error is not None:
            raise mine.error

    def _take(self) -> list[_Waiting]:
        """The oldest waiting batch and the others of its day, within the group's size."""
        day = self._waiting[0].day
        group: list[_Waiting] = []
        rest: list[_Waiting] = []
        rows = 0
        for w in self._waiting:
            if w.day == day and (not group or rows + len(w.rows) <= MAX_GROUP_ROWS):
                group.append(w)
                rows += len(w.rows)
            else:
                rest.append(w)
        self._waiting = rest
        return group

    def _write(self, group: list[_Waiting]) -> None:
        """Write the group, or each batch alone when the group fails; every batch is done."""
        try:
            self._store.insert_many([(w.tenant, w.rows) for w in group])
        except Exception as exc:
            if len(group) == 1:
                group[0].error = exc
            else:
                for w in group:
                    try:
                        self._store.insert(w.tenant, w.rows)
                    except Exception as alone:
                        w.error = alone
        except BaseException as exc:  # an interrupt: no waiter may wait for ever
            for w in group:
                w.error = exc
            raise
        finally:
            for w in group:
                w.done = True
