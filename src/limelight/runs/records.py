"""A query run's record in the metadata database: written at creation, settled once,
read by any process, purged after its retention.

The record is what outlives the process and what another API process reads
when polled for a run it did not create.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from limelight.errors import Gone
from limelight.query.spec import fields_to_json
from limelight.runs.limits import RunLimits
from limelight.runs.model import RunInfo, RunRequest, RunStatus, RunView
from limelight.settings import Settings
from limelight.store.meta import runs_repo as repo
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow
from limelight.store.meta.queries_models import QueryRun
from limelight.tenant import Tenant

log = logging.getLogger("limelight.runs")

# A STARTED record of no live run (another process, or a restart) is failed after its
# queueing and run limits plus this margin.
ORPHAN_MARGIN_SECONDS = 5.0
PURGE_EVERY = 500


class RunRecords:
    def __init__(self, settings: Settings, meta: MetaDB, limits: RunLimits) -> None:
        self._meta = meta
        self._limits = limits
        self._budget = repo.ResultBudget(
            settings.query_results_max_bytes_per_workspace, settings.query_results_max_bytes
        )
        self.retention = timedelta(hours=settings.query_results_retention_hours)
        self._lock = threading.Lock()
        self._settled = 0
        # Notes that a result was read, written off the answer's path.
        self._notes: ThreadPoolExecutor | None = None

    def start(self) -> None:
        if self._notes is None:
            self._notes = ThreadPoolExecutor(1, thread_name_prefix="query-read")

    def close(self) -> None:
        if self._notes is not None:
            self._notes.shutdown(wait=False, cancel_futures=True)
        self._notes = None

    def add(self, tenant: Tenant, info: RunInfo, request: RunRequest) -> None:
        """Write the STARTED record of a new run."""
        record = QueryRun(
            id=info.id,
            workspace_id=tenant.workspace_id,
            environment_id=tenant.environment_id,
            query_id=info.query_id,
            fields=fields_to_json(request.fields),
            from_ms=info.from_ms,
            to_ms=info.to_ms,
            limit=info.limit,
            offset=info.offset,
            granularity=info.granularity,
            status=RunStatus.STARTED,
            created_at=utcnow(),
        )
        with self._meta.connection(immediate=True) as c:
            repo.add_run(c, record)

    def settle(self, info: RunInfo, data: bytes | None) -> None:
        """Record a run's outcome (its result within the stored results' budget)."""
        try:
            with self._meta.connection(immediate=True) as c:
                repo.finish_run(
                    c,
                    info.id,
                    info.status,
                    error=info.error,
                    result=data.decode() if data is not None else None,
                    budget=self._budget,
                )
        except Exception:
            log.exception("could not record the outcome of query run %s", info.id)
        self._maybe_purge()

    def load(self, tenant: Tenant, run_id: str) -> RunView:
        """The run as its record holds it; 404 when unknown or another tenant's, 410 when
        its result was dropped. A STARTED record past every limit is failed first."""
        with self._meta.session() as s:
            record = repo.get_run(s, tenant, run_id)
            info, read = RunInfo.of_record(record), record.read_at is not None
            dropped, result = record.result_dropped, record.result
            orphan = info.status is RunStatus.STARTED and self._is_orphan(record)
        if orphan:
            with self._meta.connection(immediate=True) as c:
                repo.finish_run(c, run_id, RunStatus.FAILED, error=self._orphan_message())
            return self.load(tenant, run_id)
        if dropped:
            raise Gone(self._expired_message())
        data = result.encode() if result is not None else None
        if data is not None and not read:
            self.note_read(run_id)
        return RunView(info, data)

    def note_read(self, run_id: str) -> None:
        """Record, off the caller's path, that a result was answered: read results are
        the first dropped when the stored results pass their budget."""
        notes = self._notes
        if notes is not None:
            notes.submit(self._write_read_note, run_id)

    def _write_read_note(self, run_id: str) -> None:
        try:
            with self._meta.connection(immediate=True) as c:
                repo.mark_read(c, run_id)
        except Exception:
            log.exception("could not note that query run %s was read", run_id)

    def _maybe_purge(self) -> None:
        with self._lock:
            self._settled += 1
            if self._settled % PURGE_EVERY:
                return
        try:
            with self._meta.connection(immediate=True) as c:
                repo.purge_runs(c, utcnow() - self.retention)
        except Exception:
            log.exception("could not purge old query runs")

    def _is_orphan(self, record: QueryRun) -> bool:
        age = (datetime.now(UTC) - record.created_at).total_seconds()
        limits = self._limits
        return age > limits.max_queue_seconds + limits.max_run_seconds + ORPHAN_MARGIN_SECONDS

    def _orphan_message(self) -> str:
        return (
            f"the query run did not finish within its limit of "
            f"{self._limits.max_run_seconds:g} s (the server may have restarted); run it again"
        )

    def _expired_message(self) -> str:
        hours = self.retention.total_seconds() / 3600
        return (
            "the result of this query run has expired: results are kept up to "
            f"{hours:g} hours, and the oldest are dropped sooner when a workspace holds "
            "many; run the query again"
        )
