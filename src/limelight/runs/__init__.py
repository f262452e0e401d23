"""Query runs: records, a worker pool shared fairly by workspaces, time and size limits."""

from limelight.runs.model import RunInfo, RunRequest, RunStatus, RunView
from limelight.runs.service import QueryRunService

__all__ = ["QueryRunService", "RunInfo", "RunRequest", "RunStatus", "RunView"]
