"""Ingest limits for unit tests: the defaults of the settings unless a test says otherwise."""

from __future__ import annotations

from limelight.ingest.batch import IngestLimits
from limelight.settings import Settings


def limits(max_event_bytes: int | None = None, **overrides: int) -> IngestLimits:
    s = Settings()
    values = {
        "max_event_bytes": max_event_bytes or s.max_event_bytes,
        "max_events": s.max_events_per_request,
        "max_stored_bytes": s.max_stored_bytes_per_request,
        **overrides,
    }
    return IngestLimits(**values)
