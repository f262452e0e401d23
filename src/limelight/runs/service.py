"""Query runs: a record per run, execution on a bounded pool of worker threads, polling.

A run is created STARTED (its record is written before the id is returned),
queued for a worker (workspaces are served in turns, see ``scheduler``),
executed, and settled once: COMPLETED with its data or FAILED with a sentence
saying why. The first outcome wins, so a run that passed its time limit stays
FAILED even if its query returns later. Its time limit counts from when it
starts executing; the time it may wait for a worker has a bound of its own.

Runs of this process are also kept in memory: a poll answers from there
without touching the metadata database, and ``watch`` lets a long poll wake up
the moment the run settles. The database record (with the result) is what
outlives the process and what other workers would read.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from limelight.errors import Gone
from limelight.ids import new_id
from limelight.query.compile import Plan, RunOptions, Timeframe, compile_run
from limelight.query.keys import UNKNOWN, StoredTypes
from limelight.query.spec import QueryFields, fields_to_json
from limelight.ratelimit import RateLimiter
from limelight.runs.execute import RunFailed, execute_plan, typed_plan
from limelight.runs.limits import RunLimits, queue_timeout_message, timeout_message
from limelight.runs.scheduler import FairScheduler
from limelight.settings import Settings
from limelight.store.events.base import EventStore, Tenant
from limelight.store.meta import queries_repo as repo
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow
from limelight.store.meta.queries_models import QueryRun

log = logging.getLogger("limelight.runs")

STARTED, COMPLETED, FAILED = repo.STARTED, repo.COMPLETED, repo.FAILED
# Settled results kept in memory for fast polls; older ones are read from the database.
MEMORY_BUDGET_BYTES = 64 * 1024 * 1024
# Runs waiting for a worker beyond this many per thread are refused (503), not queued.
QUEUE_PER_THREAD = 64
# ..and beyond this many of one workspace, so one workspace cannot fill the queue.
QUEUE_PER_WORKSPACE = 64
# A STARTED record of no live run (another process, or a restart) is failed after its
# queueing and run limits plus this margin.
ORPHAN_MARGIN_SECONDS = 5.0
# How long a settled run's worker waits for `create` to write the run's record (SQLite
# waits up to 30 s for a lock) before it gives up recording the outcome.
RECORD_WAIT_SECONDS = 60.0
PURGE_EVERY = 500


@dataclass(frozen=True)
class RunRequest:
    """What a client asks to run: a saved query's or inline fields, over a timeframe."""

    fields: QueryFields
    from_ms: int
    to_ms: int
    query_id: str | None = None
    limit: int | None = None
    offset: int | None = None
    granularity: int | None = None


@dataclass(frozen=True)
class RunView:
    """A run as the API shows it: the ``query_run`` object and the data (JSON) once completed."""

    run: dict[str, Any]
    data: bytes | None


@dataclass
class _LiveRun:
    tenant: Tenant
    info: dict[str, Any]  # id, query_id, from, to, limit, offset, granularity
    # time.monotonic(): to start executing while queued, then to finish.
    deadline: float
    executing: bool = False
    status: str = STARTED
    error: str | None = None
    data: bytes | None = None
    watchers: list[Callable[[], None]] = field(default_factory=list)
    recorded: threading.Event = field(default_factory=threading.Event)  # its record written
    unrecorded: bool = False  # writing the record failed
    read_noted: bool = False  # its result was answered and the record says so

    def view(self) -> RunView:
        run = {**self.info, "status": self.status}
        if self.error is not None:
            run["error"] = self.error
        return RunView(run, self.data)


class QueryRunService:
    def __init__(self, settings: Settings, meta: MetaDB, events: EventStore) -> None:
        self.limits = RunLimits.from_settings(settings)
        self._budget = repo.ResultBudget(
            settings.query_results_max_bytes_per_workspace, settings.query_results_max_bytes
        )
        self._retention = timedelta(hours=settings.query_results_retention_hours)
        self._meta = meta
        self._events = events
        self._limiter = RateLimiter(self.limits.runs_per_minute, 60.0)
        threads = self.limits.threads
        self._scheduler = FairScheduler(
            threads,
            per_workspace=self.limits.threads_per_workspace,
            max_waiting=threads * QUEUE_PER_THREAD,
            max_waiting_per_workspace=QUEUE_PER_WORKSPACE,
        )
        # Second statements of runs; never waits on anything, so it cannot deadlock the pool.
        self._beside: ThreadPoolExecutor | None = None
        # Notes that a result was read, off the answer's path.
        self._notes: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._live: OrderedDict[str, _LiveRun] = OrderedDict()
        self._kept_bytes = 0
        self._created = 0

    def start(self) -> None:
        if self._beside is None:
            self._scheduler.start()
            self._beside = ThreadPoolExecutor(self.limits.threads, thread_name_prefix="query-stmt")
            self._notes = ThreadPoolExecutor(1, thread_name_prefix="query-read")

    def close(self) -> None:
        self._scheduler.close()
        for pool in (self._beside, self._notes):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        self._beside = self._notes = None

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
                timeframe=Timeframe(request.from_ms, request.to_ms),
                options=options,
                stored=stored,
            )

        # Compiled here for the 400s and the run's record; compiled again on the
        # worker with the types the keys hold (a lookup on the engine).
        plan = compile_with(UNKNOWN)
        live, record = self._new_run(tenant, request, plan)
        try:
            self._scheduler.submit(
                tenant.workspace_id,
                lambda: self._execute(live, request.fields, plan, compile_with),
            )
        except BaseException:
            with self._lock:
                self._live.pop(live.info["id"], None)
            raise
        # Let the worker hand its first statement to the engine (which releases the
        # GIL) before the record's write below holds the GIL for a while.
        time.sleep(0)
        # The record is written while the run executes (a few milliseconds of a short
        # run's wait), and always before the id is returned; the outcome's update
        # waits for it (`_settle`).
        try:
            with self._meta.connection(immediate=True) as c:
                repo.add_run(c, record)
        except BaseException:
            with self._lock:
                live.status, live.unrecorded = FAILED, True  # nobody can ask for it
                if self._live.pop(live.info["id"], None) is not None:
                    self._kept_bytes -= len(live.data or b"")
            raise
        finally:
            live.recorded.set()
        return self._view(live)

    def _options(self, request: RunRequest) -> RunOptions:
        defaults = RunOptions()
        return RunOptions(
            limit=defaults.limit if request.limit is None else request.limit,
            offset=request.offset or 0,
            granularity_ms=request.granularity,
            # The engine stops a statement at the run's limit rather than finish unseen work.
            max_execution_s=self.limits.max_run_seconds,
            max_result_bytes=self.limits.max_result_bytes,
            max_memory_bytes=self.limits.max_memory_bytes,
        )

    def _new_run(
        self, tenant: Tenant, request: RunRequest, plan: Plan
    ) -> tuple[_LiveRun, QueryRun]:
        """The live run (kept in memory) and its record, which shows the limit, offset and
        granularity in effect."""
        run_id = new_id()
        info = {
            "id": run_id,
            "query_id": request.query_id,
            "from": request.from_ms,
            "to": request.to_ms,
            "limit": plan.limit,
            "offset": plan.offset,
            "granularity": plan.granularity_ms,
        }
        record = QueryRun(
            id=run_id,
            workspace_id=tenant.workspace_id,
            environment_id=tenant.environment_id,
            query_id=request.query_id,
            fields=fields_to_json(request.fields),
            from_ms=request.from_ms,
            to_ms=request.to_ms,
            limit=plan.limit,
            offset=plan.offset,
            granularity=plan.granularity_ms,
            status=STARTED,
            created_at=utcnow(),
        )
        # Until it starts, the deadline is the one to start by (see `_begin`).
        live = _LiveRun(tenant, info, time.monotonic() + self.limits.max_queue_seconds)
        with self._lock:
            self._live[run_id] = live
        return live, record

    # -- executing ------------------------------------------------------------------------

    def _execute(
        self,
        live: _LiveRun,
        fields: QueryFields,
        untyped: Plan,
        compile_with: Callable[[StoredTypes], Plan],
    ) -> None:
        try:
            if self._begin(live):
                plan = typed_plan(
                    self._events, live.tenant, fields, untyped, compile_with, self.limits
                )
                data = execute_plan(self._events, plan, self.limits, live.deadline, self._beside)
                self._settle(live, COMPLETED, data=data)
        except RunFailed as exc:
            self._settle(live, FAILED, error=str(exc))
        except Exception:
            log.exception("query run %s failed", live.info["id"])
            self._settle(live, FAILED, error="the query run failed on an internal error")
        self._maybe_purge()

    def _begin(self, live: _LiveRun) -> bool:
        """Mark the run executing, its time limit counting from now; False when it is
        already settled or waited too long for a worker (then failed)."""
        with self._lock:
            if live.status != STARTED:
                return False
            now = time.monotonic()
            if now <= live.deadline:
                live.executing, live.deadline = True, now + self.limits.max_run_seconds
                return True
        self._settle(live, FAILED, error=queue_timeout_message(self.limits.max_queue_seconds))
        return False

    def _settle(
        self, live: _LiveRun, status: str, *, error: str | None = None, data: bytes | None = None
    ) -> None:
        with self._lock:
            if live.status != STARTED:
                return
            live.status, live.error, live.data = status, error, data
            watchers, live.watchers = live.watchers, []
            self._kept_bytes += len(data or b"")
            self._forget_old()
        for wake in watchers:
            wake()
        if not live.recorded.wait(RECORD_WAIT_SECONDS):
            log.error("query run %s: its record was not written in time", live.info["id"])
            return
        if live.unrecorded:
            return  # see `create`
        try:
            with self._meta.connection(immediate=True) as c:
                repo.finish_run(
                    c,
                    live.info["id"],
                    status,
                    error=error,
                    result=data.decode() if data is not None else None,
                    budget=self._budget,
                )
        except Exception:
            log.exception("could not record the outcome of query run %s", live.info["id"])

    def _forget_old(self) -> None:
        """Drop the oldest settled runs from memory while over budget (caller holds the lock)."""
        while self._kept_bytes > MEMORY_BUDGET_BYTES or len(self._live) > 10_000:
            victim = next((k for k, v in self._live.items() if v.status != STARTED), None)
            if victim is None:
                return
            self._kept_bytes -= len(self._live.pop(victim).data or b"")

    def _maybe_purge(self) -> None:
        with self._lock:
            self._created += 1
            if self._created % PURGE_EVERY:
                return
        try:
            with self._meta.connection(immediate=True) as c:
                repo.purge_runs(c, utcnow() - self._retention)
        except Exception:
            log.exception("could not purge old query runs")

    # -- polling --------------------------------------------------------------------------

    def peek(self, tenant: Tenant, run_id: str) -> RunView | None:
        """The run from memory, without blocking (so callable on the event loop); None
        when only ``get`` can answer (not a live run, or one to fail as timed out)."""
        live = self._live_run(tenant, run_id)
        if live is None or (live.status == STARTED and time.monotonic() > live.deadline):
            return None
        return self._answered(live)

    def get(self, tenant: Tenant, run_id: str) -> RunView:
        """The run as it stands; 404 for an unknown id or a run of another tenant."""
        live = self._live_run(tenant, run_id)
        if live is not None:
            if live.status == STARTED and time.monotonic() > live.deadline:
                self._settle(live, FAILED, error=self._overdue_message(live))
            return self._answered(live)
        with self._meta.session() as s:
            record = repo.get_run(s, tenant, run_id)
            view = _stored_view(record, self._retention)
        if view.run["status"] == STARTED and _is_orphan(record, self.limits):
            with self._meta.connection(immediate=True) as c:
                repo.finish_run(c, run_id, FAILED, error=_orphan_message(self.limits))
            return self.get(tenant, run_id)
        if view.data is not None and record.read_at is None:
            self._note_read(run_id)
        return view

    def _answered(self, live: _LiveRun) -> RunView:
        """The live run's view, noting (once) that its result is being answered."""
        view = self._view(live)
        if view.data is not None and not live.read_noted and live.recorded.is_set():
            live.read_noted = True
            self._note_read(live.info["id"])
        return view

    def _note_read(self, run_id: str) -> None:
        """Record off the caller's path that the result was read: read results are the
        first dropped when the stored results pass their budget."""
        notes = self._notes
        if notes is not None:
            notes.submit(self._write_read_note, run_id)

    def _write_read_note(self, run_id: str) -> None:
        try:
            with self._meta.connection(immediate=True) as c:
                repo.mark_read(c, run_id)
        except Exception:
            log.exception("could not note that query run %s was read", run_id)

    def _overdue_message(self, live: _LiveRun) -> str:
        if live.executing:
            return timeout_message(self.limits.max_run_seconds)
        return queue_timeout_message(self.limits.max_queue_seconds)

    def watch(self, tenant: Tenant, run_id: str, wake: Callable[[], None]) -> float:
        """Call ``wake`` (from a worker thread) when the run settles.

        Returns the seconds left before the run's current deadline (to start, while
        queued; to finish, once executing), or 0 when there is nothing to wait for
        (settled, or not a run of this process).
        """
        live = self._live_run(tenant, run_id)
        if live is None:
            return 0.0
        with self._lock:
            if live.status != STARTED:
                return 0.0
            live.watchers.append(wake)
        return max(0.0, live.deadline - time.monotonic())

    def _view(self, live: _LiveRun) -> RunView:
        with self._lock:  # never a status without the data or error that came with it
            return live.view()

    def _live_run(self, tenant: Tenant, run_id: str) -> _LiveRun | None:
        with self._lock:
            live = self._live.get(run_id)
        if live is None or live.tenant != tenant:
            return None
        return live


def _stored_view(record: QueryRun, retention: timedelta) -> RunView:
    run: dict[str, Any] = {
        "id": record.id,
        "query_id": record.query_id,
        "from": record.from_ms,
        "to": record.to_ms,
        "limit": record.limit,
        "offset": record.offset,
        "granularity": record.granularity,
        "status": record.status,
    }
    if record.error is not None:
        run["error"] = record.error
    if record.result_dropped:
        hours = retention.total_seconds() / 3600
        raise Gone(
            "the result of this query run has expired: results are kept up to "
            f"{hours:g} hours, and the oldest are dropped sooner when a workspace holds "
            "many; run the query again"
        )
    data = record.result.encode() if record.result is not None else None
    return RunView(run, data)


def _is_orphan(record: QueryRun, limits: RunLimits) -> bool:
    age = (datetime.now(UTC) - record.created_at).total_seconds()
    return age > limits.max_queue_seconds + limits.max_run_seconds + ORPHAN_MARGIN_SECONDS


def _orphan_message(limits: RunLimits) -> str:
    return (
        f"the query run did not finish within its limit of {limits.max_run_seconds:g} s "
        "(the server may have restarted); run it again"
    )
