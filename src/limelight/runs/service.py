"""Query runs: admission, scheduling, execution and polling, over the registry and records.

A run is created STARTED (its record is written before the id is returned),
queued for a worker (workspaces are served in turns, see ``scheduler``),
executed, and settled once: COMPLETED with its data or FAILED with a sentence
saying why. The first outcome wins, so a run that passed its time limit stays
FAILED even if its query returns later. Its time limit counts from when it
starts executing; the time it may wait for a worker has a bound of its own.

Runs of this process are answered from memory (``registry``); their records
(``records``) are what other processes and later polls read.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from limelight import metrics
from limelight.errors import Unavailable
from limelight.ids import new_id
from limelight.query.compile import Plan, RunOptions, Timeframe, compile_run
from limelight.query.keys import UNKNOWN, StoredTypes
from limelight.query.spec import QueryFields
from limelight.ratelimit import RateLimiter, WindowCounts
from limelight.runs.execute import RunFailed, dataset_warnings, execute_plan, typed_plan
from limelight.runs.limits import RunLimits, queue_timeout_message, timeout_message
from limelight.runs.model import RunInfo, RunRequest, RunStatus, RunView
from limelight.runs.records import RunRecords
from limelight.runs.registry import LiveRun, LiveRuns
from limelight.runs.scheduler import FairScheduler
from limelight.settings import Settings
from limelight.store.events.base import EventStore
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant

log = logging.getLogger("limelight.runs")
T = TypeVar("T")

# Runs waiting for a worker beyond this many per thread are refused (503), not queued.
QUEUE_PER_THREAD = 64
# ..and beyond this many of one workspace, so one workspace cannot fill the queue.
QUEUE_PER_WORKSPACE = 64
# How long a settled run's worker waits for `create` to write the run's record (SQLite
# waits up to 30 s for a lock) before it gives up recording the outcome.
RECORD_WAIT_SECONDS = 60.0
INTERNAL_ERROR = "the query run failed on an internal error"


class QueryRunService:
    def __init__(
        self,
        settings: Settings,
        meta: MetaDB,
        events: EventStore,
        counts: WindowCounts | None = None,
    ) -> None:
        self.limits = RunLimits.from_settings(settings)
        self._events = events
        self._limiter = RateLimiter(
            self.limits.runs_per_minute, 60.0, counts=counts, name="run-creations"
        )
        self.records = RunRecords(settings, meta, self.limits)
        self._live = LiveRuns()
        threads = self.limits.threads
        self._scheduler = FairScheduler(
            threads,
            per_workspace=self.limits.threads_per_workspace,
            max_waiting=threads * QUEUE_PER_THREAD,
            max_waiting_per_workspace=QUEUE_PER_WORKSPACE,
        )
        # Second statements of runs; never waits on anything, so it cannot deadlock the pool.
        self._beside: ThreadPoolExecutor | None = None

    def start(self) -> None:
        if self._beside is None:
            self._scheduler.start()
            self.records.start()
            self._beside = ThreadPoolExecutor(self.limits.threads, thread_name_prefix="query-stmt")

    def close(self) -> None:
        self._scheduler.close()
        self.records.close()
        if self._beside is not None:
            self._beside.shutdown(wait=False, cancel_futures=True)
        self._beside = None

    # -- creating -------------------------------------------------------------------------

    def create(self, tenant: Tenant, request: RunRequest) -> RunView:
        """Record and queue a run; raises 400 (bad timeframe or query), 429 or 503."""
        self._limiter.hit(tenant.workspace_id)
        self.limits.check_timeframe(request.from_ms, request.to_ms)
        options = self._options(request)

        def compile_with(stored: StoredTypes) -> Plan:
            return compile_run(
                request.fields,
                workspace_id=tenant.workspace_id,
                environment_id=tenant.environment_id,
                table=self._events.table,
                dictionaries=self._events.text_dictionaries,
                timeframe=Timeframe(request.from_ms, request.to_ms),
                options=options,
                stored=stored,
            )

        # Compiled here for the 400s and the run's record; compiled again on the
        # worker with the types the keys hold (a lookup on the engine).
        plan = compile_with(UNKNOWN)
        info = RunInfo(
            id=new_id(),
            query_id=request.query_id,
            from_ms=request.from_ms,
            to_ms=request.to_ms,
            limit=plan.limit,
            offset=plan.offset,
            granularity=plan.granularity_ms,
        )
        # Until it starts, the deadline is the one to start by (see `_execute`).
        live = LiveRun(tenant, info, time.monotonic() + self.limits.max_queue_seconds)
        self._live.add(live)
        try:
            self._scheduler.submit(
                tenant.workspace_id,
                lambda: self._execute(live, request.fields, plan, compile_with),
            )
        except BaseException:
            self._live.remove(live)
            raise
        # Let the worker hand its first statement to the engine (which releases the
        # GIL) before the record's write below holds the GIL for a while.
        time.sleep(0)
        # The record is written while the run executes (a few milliseconds of a short
        # run's wait), and always before the id is returned; the outcome's update
        # waits for it (`_settle`).
        try:
            self.records.add(tenant, info, request)
        except BaseException:
            live.unrecorded = True
            self._live.settle(live, RunStatus.FAILED, "its record could not be written", None)
            self._live.remove(live)
            raise
        finally:
            live.recorded.set()
        return self._live.view(live)

    def _options(self, request: RunRequest) -> RunOptions:
        # The engine stops a statement at the run's limits rather than finish unseen work.
        return self.limits.run_options(
            request.limit, offset=request.offset or 0, granularity_ms=request.granularity
        )

    def read(self, tenant: Tenant, job: Callable[[float], T]) -> Future[T]:
        """Admit and queue a read that answers at once (trace search, the service
        overview) as a run is: the run creations' rate limit (429), the workspace's
        turn on the workers and its waiting bounds (503), the time to start by. ``job``
        gets its deadline (on ``time.monotonic``; its statements also stop at the run
        limits); the future holds its answer or its error."""
        self._limiter.hit(tenant.workspace_id)
        future: Future[T] = Future()
        start_by = time.monotonic() + self.limits.max_queue_seconds

        def work() -> None:
            if not future.set_running_or_notify_cancel():
                return  # the caller stopped waiting
            if time.monotonic() > start_by:
                message = queue_timeout_message(self.limits.max_queue_seconds)
                future.set_exception(Unavailable(message))
                return
            try:
                future.set_result(job(time.monotonic() + self.limits.max_run_seconds))
            except BaseException as exc:  # handed to the caller, raised there
                future.set_exception(exc)

        self._scheduler.submit(tenant.workspace_id, work)
        return future

    # -- executing ------------------------------------------------------------------------

    def _execute(
        self,
        live: LiveRun,
        fields: QueryFields,
        untyped: Plan,
        compile_with: Callable[[StoredTypes], Plan],
    ) -> None:
        metrics.QUERY_RUN_QUEUE_SECONDS.observe(time.monotonic() - live.created)
        if not self._live.begin(live, self.limits.max_run_seconds):
            if not live.settled:
                self._settle(live, RunStatus.FAILED, self._overdue_message(live))
            return
        started = time.perf_counter()
        data: bytes | None = None
        error: str | None = None
        try:
            plan = typed_plan(self._events, live.tenant, fields, untyped, compile_with, self.limits)
            data = execute_plan(
                self._events,
                plan,
                self.limits,
                live.deadline,
                self._beside,
                lambda: dataset_warnings(self._events, live.tenant, fields, self.limits),
            )
        except RunFailed as exc:
            error = str(exc)
        except Exception:
            log.exception("query run %s failed", live.run_id)
            error = INTERNAL_ERROR
        status = RunStatus.FAILED if error is not None else RunStatus.COMPLETED
        # Counted before the run settles, so whoever the outcome wakes finds it counted.
        metrics.QUERY_RUN_SECONDS.labels(status.value).observe(time.perf_counter() - started)
        self._settle(live, status, error, data)

    def _settle(
        self,
        live: LiveRun,
        status: RunStatus,
        error: str | None = None,
        data: bytes | None = None,
    ) -> None:
        if not self._live.settle(live, status, error, data):
            return
        if not live.recorded.wait(RECORD_WAIT_SECONDS):
            log.error("query run %s: its record was not written in time", live.run_id)
            return
        if not live.unrecorded:
            self.records.settle(live.info, data)

    def _overdue_message(self, live: LiveRun) -> str:
        if live.executing:
            return timeout_message(self.limits.max_run_seconds)
        return queue_timeout_message(self.limits.max_queue_seconds)

    # -- polling --------------------------------------------------------------------------

    def peek(self, tenant: Tenant, run_id: str) -> RunView | None:
        """The run from memory, without blocking (so callable on the event loop); None
        when only ``get`` can answer (not a live run, or one to fail as overdue)."""
        live = self._live.find(tenant, run_id)
        if live is None or live.overdue():
            return None
        return self._answered(live)

    def get(self, tenant: Tenant, run_id: str) -> RunView:
        """The run as it stands; 404 for an unknown id or a run of another tenant, 410 when
        its result expired."""
        live = self._live.find(tenant, run_id)
        if live is None:
            return self.records.load(tenant, run_id)
        if live.overdue():
            self._settle(live, RunStatus.FAILED, self._overdue_message(live))
        return self._answered(live)

    def _answered(self, live: LiveRun) -> RunView:
        """The live run's view, noting (once) that its result is being answered."""
        view = self._live.view(live)
        if view.data is not None and not live.read_noted and live.recorded.is_set():
            live.read_noted = True
            self.records.note_read(live.run_id)
        return view

    def watch(self, tenant: Tenant, run_id: str, wake: Callable[[], None]) -> float:
        """Call ``wake`` (from a worker thread) when the run settles.

        Returns the seconds left before the run's current deadline (to start, while
        queued; to finish, once executing), or 0 when there is nothing to wait for
        (settled, or not a run of this process).
        """
        live = self._live.find(tenant, run_id)
        return 0.0 if live is None else self._live.watch(live, wake)
