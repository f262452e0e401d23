"""What a query run is, as the rest of the code sees it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from limelight.query.spec import QueryFields
from limelight.store.meta.queries_models import QueryRun, RunStatus

__all__ = ["RunInfo", "RunRequest", "RunStatus", "RunView"]


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
class RunInfo:
    """The ``query_run`` object: the run's parameters in effect and where it stands."""

    id: str
    query_id: str | None
    from_ms: int
    to_ms: int
    limit: int | None
    offset: int | None
    granularity: int | None
    status: RunStatus = RunStatus.STARTED
    error: str | None = None

    @classmethod
    def of_record(cls, record: QueryRun) -> RunInfo:
        return cls(
            id=record.id,
            query_id=record.query_id,
            from_ms=record.from_ms,
            to_ms=record.to_ms,
            limit=record.limit,
            offset=record.offset,
            granularity=record.granularity,
            status=RunStatus(record.status),
            error=record.error,
        )

    def settled(self, status: RunStatus, error: str | None) -> RunInfo:
        return replace(self, status=status, error=error)

    def to_json(self) -> dict[str, Any]:
        run: dict[str, Any] = {
            "id": self.id,
            "query_id": self.query_id,
            "from": self.from_ms,
            "to": self.to_ms,
            "limit": self.limit,
            "offset": self.offset,
            "granularity": self.granularity,
            "status": self.status.value,
        }
        if self.error is not None:
            run["error"] = self.error
        return run


@dataclass(frozen=True)
class RunView:
    """A run as the API shows it: its info and the data (JSON) once completed."""

    info: RunInfo
    data: bytes | None

    @property
    def status(self) -> RunStatus:
        return self.info.status

    @property
    def run(self) -> dict[str, Any]:
        return self.info.to_json()
