"""Moments as the API writes them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import overload


@overload
def iso_utc(moment: datetime) -> str: ...
@overload
def iso_utc(moment: None) -> None: ...
def iso_utc(moment: datetime | None) -> str | None:
    """ISO 8601 in UTC with milliseconds, e.g. 2026-11-21T10:00:00.000Z."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
