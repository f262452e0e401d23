"""Small batches sharing one INSERT (group commit).

An INSERT costs the engine a part, a sync to disk and a pass of the paths view
whatever its size: 10-event requests from 64 clients went in at 770 events/s
one INSERT each, where the same events in 1,000-event batches go in at 20k/s.
So a batch waits while every insert slot is busy, and whoever frees a slot
takes the waiting batches of the same tenant and day (up to ``MAX_GROUP_ROWS``
and ``MAX_GROUP_BYTES``) into one INSERT; each request is answered once its
rows are written, as before. There is no timer: a batch that finds a slot free
goes at once, so a lone client waits for nothing, and the busier the engine,
the larger the groups. Used in front of the embedded engine when its write-ahead
log is off (``LIMELIGHT_INGEST_BUFFER=false``; with it on, small batches are
acknowledged from the log and written in large blocks, ``store.events.buffered``);
a ClickHouse server groups small inserts itself (``async_insert``).

A tenant has one group INSERT at a time: its batches that arrive meanwhile wait
for it and go together after it, and the other slot serves other tenants. A
tenant's clients that took both slots made groups half as large, for the same
fixed cost an INSERT has (its part, the paths view, the sync, the merges of its
part). Waiting is for a larger group, so a tenant's waiting batches that make
a group as large as a batch that goes alone (``ALONE_ROWS``, ``ALONE_BYTES``)
take a free slot beside its INSERT, as such a batch would: a tenant with more
waiting than one INSERT holds keeps both sessions busy. Through the Events API,
three servers of each version in turns (medians; events/s, then µs of the
server's CPU an event): 10-event bodies from 64 clients of one tenant 3,330
against 2,646 and 518 against 662; the same over 16 tenants 1,556 against 1,161
and 1,142 against 1,516; 1,000-event bodies from 4 clients 17,591 against
17,255 and 89 against 108.

A group never mixes tenants: one tenant's events cannot make another's INSERT
fail, nor change how another's values are typed in it (keys.py: a mixed array
can type the arrays of its path parsed in the same chunk of an INSERT). It is
one day's rows, well under the engine's block size, so the engine writes one
part, whole or not at all. When the engine refuses the group's text before
writing anything (a parse error), each batch is tried alone, so one request's
bad rows fail that request only; any other failure (a timeout, a full disk) may
have written the group, so every request in it gets the error rather than a
second copy.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from limelight.errors import StoreError
from limelight.store.events.base import REFUSED_TEXT, EventRow, EventStore
from limelight.tenant import Tenant
from limelight.times import DAY_MS

# A batch this large already makes a good part: it goes alone.
ALONE_ROWS = 5_000
ALONE_BYTES = 2 * 1024 * 1024
# A group's rows and JSON bytes: far under the block the engine squashes an INSERT
# into (256 MB, sent twice: `raw` and `data`), so the group is one part.
MAX_GROUP_ROWS = 20_000
MAX_GROUP_BYTES = 16 * 1024 * 1024
# As many INSERTs at once as the embedded store has insert sessions (chdb_store).
SLOTS = 2


@dataclass(slots=True)
class _Waiting:
    tenant: Tenant
    rows: Sequence[EventRow]
    day: int
    size: int  # JSON bytes
    done: bool = False
    error: BaseException | None = None


@dataclass(slots=True, eq=False)
class _Writing:
    """A group INSERT in flight (compared by identity: one tenant may have two)."""

    tenant: Tenant


class GroupCommit:
    """``insert`` as the store's, with concurrent small batches written together."""

    def __init__(self, store: EventStore, slots: int = SLOTS) -> None:
        self._store = store
        self._slots = slots
        self._waiting: list[_Waiting] = []
        # One entry an INSERT in flight: its tenant, in an object of its own, so the write
        # that added it removes exactly it. The free slots are the ones it leaves.
        self._writing: list[_Writing] = []
        self._changed = threading.Condition(threading.Lock())

    def insert(self, tenant: Tenant, rows: Sequence[EventRow]) -> None:
        if not rows:
            return
        days = {r.timestamp_ms // DAY_MS for r in rows}
        size = sum(len(r.raw) for r in rows)
        if _goes_alone(len(rows), size) or len(days) > 1:
            self._store.insert(tenant, rows)
            return
        mine = _Waiting(tenant, rows, days.pop(), size)
        with self._changed:
            self._waiting.append(mine)
            try:
                while not mine.done:
                    # Mine may be in another's group, or wait for its tenant's INSERT.
                    group = self._take() if len(self._writing) < self._slots else []
                    if not group:
                        self._changed.wait()
                        continue
                    writing = _Writing(group[0].tenant)
                    try:
                        # Inside the try that removes it, whatever interrupts the write: a
                        # tenant left in flight would wait for an INSERT that never ends.
                        self._writing.append(writing)
                        self._changed.release()
                        try:
                            self._write(group)
                        finally:
                            self._changed.acquire()
                    finally:
                        self._writing = [w for w in self._writing if w is not writing]
                        self._changed.notify_all()
            except BaseException:
                # Interrupted while waiting or writing another's group: the request fails.
                # Its batch, if still waiting, is taken out so no one writes it later; one
                # already taken into another's group goes in with that group.
                self._waiting = [w for w in self._waiting if w is not mine]
                raise
        if mine.error is not None:
            raise mine.error

    def _take(self) -> list[_Waiting]:
        """The group of the oldest waiting batch whose tenant has no INSERT in flight, or
        whose group is full already (a tenant with more waiting than one INSERT holds
        gets both slots, as its large batches would): that batch and the others of its
        tenant and day, within the group's size. None when every waiting batch waits for
        its tenant's INSERT."""
        busy = {w.tenant for w in self._writing}
        looked: set[tuple[Tenant, int]] = set()
        for first in self._waiting:
            if (first.tenant, first.day) in looked:
                continue
            looked.add((first.tenant, first.day))
            group = self._group_of(first)
            rows, size = sum(len(w.rows) for w in group), sum(w.size for w in group)
            if first.tenant in busy and not _goes_alone(rows, size):
                continue
            taken = {id(w) for w in group}
            self._waiting = [w for w in self._waiting if id(w) not in taken]
            return group
        return []

    def _group_of(self, first: _Waiting) -> list[_Waiting]:
        """``first`` and the waiting batches of its tenant and day after it, in order,
        within ``MAX_GROUP_ROWS`` and ``MAX_GROUP_BYTES``."""
        group: list[_Waiting] = []
        rows = size = 0
        for w in self._waiting:
            if w.tenant != first.tenant or w.day != first.day:
                continue
            if group and (rows + len(w.rows) > MAX_GROUP_ROWS or size + w.size > MAX_GROUP_BYTES):
                continue
            group.append(w)
            rows += len(w.rows)
            size += w.size
        return group

    def _write(self, group: list[_Waiting]) -> None:
        """Write the group; every batch is done, with the error that stopped its rows."""
        unanswered = list(group)
        try:
            try:
                # One tenant's rows (``_take``): one INSERT of them all.
                self._store.insert(group[0].tenant, [r for w in group for r in w.rows])
                unanswered.clear()
            except Exception as exc:
                if len(group) == 1 or not _refused_unwritten(exc):
                    for w in group:
                        w.error = exc
                    unanswered.clear()
            for w in list(unanswered):  # the engine wrote nothing: each batch alone
                try:
                    self._store.insert(w.tenant, w.rows)
                except Exception as alone:
                    w.error = alone
                unanswered.remove(w)
        except BaseException as exc:  # an interrupt: what was not answered failed
            for w in unanswered:
                w.error = exc
            raise
        finally:
            for w in group:
                w.done = True


def _goes_alone(rows: int, size: int) -> bool:
    """Rows this many (or ``size`` JSON bytes this large) already make a good part."""
    return rows >= ALONE_ROWS or size >= ALONE_BYTES


def _refused_unwritten(exc: Exception) -> bool:
    return isinstance(exc, StoreError) and exc.code in REFUSED_TEXT
