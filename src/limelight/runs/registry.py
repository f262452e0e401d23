"""The runs of this process, in memory: polls answer from here, and waiters wake here.

A poll of a live run needs no database read, and ``watch`` lets a long poll
wake the moment its run settles. Settled runs stay while their results fit a
memory budget; older ones are answered from their records.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from limelight.runs.model import RunInfo, RunStatus, RunView
from limelight.tenant import Tenant

# Settled results kept in memory for fast polls; older ones are read from the database.
MEMORY_BUDGET_BYTES = 64 * 1024 * 1024
MAX_KEPT_RUNS = 10_000


@dataclass
class LiveRun:
    tenant: Tenant
    info: RunInfo
    # time.monotonic(): to start executing by while queued, then to finish by.
    deadline: float
    executing: bool = False
    data: bytes | None = None
    watchers: list[Callable[[], None]] = field(default_factory=list)
    recorded: threading.Event = field(default_factory=threading.Event)  # its record written
    unrecorded: bool = False  # writing the record failed: nobody can ask for it
    read_noted: bool = False  # its result was answered and the record says so
    created: float = field(default_factory=time.monotonic)

    @property
    def run_id(self) -> str:
        return self.info.id

    @property
    def settled(self) -> bool:
        return self.info.status is not RunStatus.STARTED

    def overdue(self) -> bool:
        return not self.settled and time.monotonic() > self.deadline


class LiveRuns:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: OrderedDict[str, LiveRun] = OrderedDict()
        self._kept_bytes = 0

    def add(self, live: LiveRun) -> None:
        with self._lock:
            self._runs[live.run_id] = live

    def remove(self, live: LiveRun) -> None:
        with self._lock:
            if self._runs.pop(live.run_id, None) is not None:
                self._kept_bytes -= len(live.data or b"")

    def find(self, tenant: Tenant, run_id: str) -> LiveRun | None:
        """A live run of the tenant's; another tenant's is as unknown as a missing one."""
        with self._lock:
            live = self._runs.get(run_id)
        return live if live is not None and live.tenant == tenant else None

    def view(self, live: LiveRun) -> RunView:
        with self._lock:  # never a status without the data or error that came with it
            return RunView(live.info, live.data)

    def begin(self, live: LiveRun, max_run_seconds: float) -> bool:
        """Mark the run executing, its deadline ``max_run_seconds`` from now; False when it
        is settled, or past its deadline to start."""
        with self._lock:
            now = time.monotonic()
            if live.settled or now > live.deadline:
                return False
            live.executing, live.deadline = True, now + max_run_seconds
            return True

    def settle(
        self, live: LiveRun, status: RunStatus, error: str | None, data: bytes | None
    ) -> bool:
        """Settle the run once (False if it already was) and wake its waiters."""
        with self._lock:
            if live.settled:
                return False
            live.info, live.data = live.info.settled(status, error), data
            watchers, live.watchers = live.watchers, []
            if live.run_id in self._runs:
                self._kept_bytes += len(data or b"")
                self._forget_old()
        for wake in watchers:
            wake()
        return True

    def watch(self, live: LiveRun, wake: Callable[[], None]) -> float:
        """Call ``wake`` when the run settles; the seconds left before its current
        deadline, or 0 when it has settled already."""
        with self._lock:
            if live.settled:
                return 0.0
            live.watchers.append(wake)
            return max(0.0, live.deadline - time.monotonic())

    def _forget_old(self) -> None:
        """Drop the oldest settled runs while over budget (the caller holds the lock)."""
        while self._kept_bytes > MEMORY_BUDGET_BYTES or len(self._runs) > MAX_KEPT_RUNS:
            victim = next((k for k, v in self._runs.items() if v.settled), None)
            if victim is None:
                return
            self._kept_bytes -= len(self._runs.pop(victim).data or b"")
