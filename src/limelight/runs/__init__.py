"""Query runs: records, a bounded worker pool, time and size limits."""

from limelight.runs.service import QueryRunService, RunRequest, RunView

__all__ = ["QueryRunService", "RunRequest", "RunView"]
