"""Worker threads shared fairly by workspaces.

A plain FIFO pool let one workspace starve every other: eight heavy runs
queued every few seconds pushed another workspace's 0.02 s COUNT to 8-10 s.
Here each workspace has its own queue, the workers serve the workspaces in
turns (round robin over those with work waiting), and no workspace runs more
than ``per_workspace`` jobs at once, so a workspace with nothing running gets
the next free worker, and usually a free one at once.

Written here rather than taken from a library: the executors of the standard
library and of the usual task queues are FIFO, and a per-key round robin over
threads is a few dozen lines.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict, deque
from collections.abc import Callable

from limelight import metrics
from limelight.errors import Unavailable

Job = Callable[[], None]

log = logging.getLogger("limelight.runs")

# What a refused run is told: its queue drains as fast as runs finish, most in well under
# a second.
RETRY_AFTER_SECONDS = 1
# Why a run was refused, as the metrics name it, and what its client is told.
REFUSALS = {
    "stopping": "query runs are not accepted while the server starts or stops",
    "workspace_queue_full": "too many query runs of this workspace are waiting; try again",
    "queue_full": "too many query runs are waiting; try again shortly",
}
for _reason in REFUSALS:  # every reason in /metrics from the start, at 0
    metrics.QUERY_RUNS_REFUSED.labels(_reason)


def refused(reason: str) -> Unavailable:
    """The 503 of a run the queue does not take, counted by reason."""
    metrics.QUERY_RUNS_REFUSED.labels(reason).inc()
    return Unavailable(REFUSALS[reason], retry_after=RETRY_AFTER_SECONDS)


class FairScheduler:
    def __init__(
        self,
        threads: int,
        per_workspace: int,
        max_waiting: int,
        max_waiting_per_workspace: int,
        name: str = "query-run",
    ) -> None:
        self.threads = threads
        self.per_workspace = max(1, min(per_workspace, threads))
        self.max_waiting = max_waiting
        self.max_waiting_per_workspace = max_waiting_per_workspace
        self._name = name
        self._cond = threading.Condition()
        # Workspaces with jobs waiting, in the order they are next served.
        self._queues: OrderedDict[str, deque[Job]] = OrderedDict()
        self._running: dict[str, int] = {}
        self._waiting = 0
        self._workers: list[threading.Thread] = []
        self._stopping = False

    def start(self) -> None:
        with self._cond:
            if self._workers:
                return
            self._stopping = False
            for i in range(self.threads):
                worker = threading.Thread(target=self._work, name=f"{self._name}-{i}", daemon=True)
                self._workers.append(worker)
                worker.start()

    def close(self) -> None:
        """Stop taking jobs; jobs waiting are dropped, running ones finish on their own."""
        with self._cond:
            self._stopping = True
            self._queues.clear()
            metrics.QUERY_RUNS_WAITING.dec(self._waiting)
            self._waiting = 0
            self._cond.notify_all()
            self._workers = []

    @property
    def waiting(self) -> int:
        return self._waiting

    def submit(self, workspace: str, job: Job) -> None:
        """Queue ``job`` for ``workspace``; 503 with Retry-After when too many are waiting
        (or the scheduler is not running)."""
        with self._cond:
            if self._stopping or not self._workers:
                raise refused("stopping")
            queue = self._queues.get(workspace)
            if queue is not None and len(queue) >= self.max_waiting_per_workspace:
                raise refused("workspace_queue_full")
            if self._waiting >= self.max_waiting:
                raise refused("queue_full")
            if queue is None:
                queue = self._queues[workspace] = deque()
            queue.append(job)
            self._waiting += 1
            metrics.QUERY_RUNS_WAITING.inc()
            self._cond.notify()

    def _take(self) -> tuple[str, Job] | None:
        """The next job in turn (caller holds the lock), or None when none may run now."""
        for workspace, queue in self._queues.items():
            if self._running.get(workspace, 0) >= self.per_workspace:
                continue
            job = queue.popleft()
            if queue:
                self._queues.move_to_end(workspace)  # its next job waits for its next turn
            else:
                del self._queues[workspace]
            self._waiting -= 1
            metrics.QUERY_RUNS_WAITING.dec()
            self._running[workspace] = self._running.get(workspace, 0) + 1
            return workspace, job
        return None

    def _work(self) -> None:
        while True:
            with self._cond:
                taken = None
                while not self._stopping and (taken := self._take()) is None:
                    self._cond.wait()
                if self._stopping or taken is None:
                    return
            workspace, job = taken
            try:
                job()
            except Exception:  # a job settles its own failures; this keeps the worker alive
                log.exception("a scheduled job failed")
            finally:
                with self._cond:
                    left = self._running[workspace] - 1
                    if left:
                        self._running[workspace] = left
                    else:
                        del self._running[workspace]
                    # A workspace at its cap may have work that can run now.
                    self._cond.notify()
