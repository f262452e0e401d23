"""The limits of query runs: timeframe, run time, result size, and the engine's part in them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from limelight.errors import BadRequest, StoreError
from limelight.ingest.enrich import EARLIEST_MS
from limelight.query.compile import PatternFields, RunOptions
from limelight.runs.engine_errors import (
    CANNOT_COMPILE_REGEXP,
    CANNOT_PARSE_ESCAPE_SEQUENCE,
    MEMORY_LIMIT_EXCEEDED,
    TIMEOUT_EXCEEDED,
    TOO_MANY_ROWS_OR_BYTES,
    describe_code,
)
from limelight.settings import MIB, Settings
from limelight.times import DAY_MS

# Seconds sent as milliseconds land in 1970 (1764000000 is 1970-01-21): a timeframe
# that ends before the earliest event time ingest keeps (2000-01-01; an earlier one is
# replaced by the receive time) can hold no event, and is refused saying so rather
# than answered with nothing.
SECONDS_HINT = (
    f"is before {datetime.fromtimestamp(EARLIEST_MS / 1000, UTC):%Y}, when no event is"
    " stored: times are unix milliseconds (e.g. 1764000000000), not seconds"
)


def check_order(from_ms: int, to_ms: int) -> None:
    """400 naming ``from`` when it is after ``to``."""
    if from_ms > to_ms:
        raise BadRequest(
            message="Invalid timeframe",
            errors=[{"field": "from", "message": "must not be after 'to'"}],
        )


def check_epoch(from_ms: int | None, to_ms: int | None) -> None:
    """400 naming each field before ``EARLIEST_MS`` when the whole timeframe is (seconds
    sent as milliseconds); either end may be absent."""
    end = to_ms if to_ms is not None else from_ms
    if end is None or end >= EARLIEST_MS:
        return
    given = {"from": from_ms, "to": to_ms}
    raise BadRequest(
        message="Invalid timeframe",
        errors=[
            {"field": field, "message": SECONDS_HINT}
            for field, value in given.items()
            if value is not None and value < EARLIEST_MS
        ],
    )


@dataclass(frozen=True)
class RunLimits:
    max_timeframe_ms: int
    max_result_bytes: int
    max_run_seconds: float
    max_memory_bytes: int
    runs_per_minute: int
    threads: int
    threads_per_workspace: int
    max_queue_seconds: float

    @classmethod
    def from_settings(cls, settings: Settings) -> RunLimits:
        return cls(
            max_timeframe_ms=int(settings.query_max_timeframe_days * DAY_MS),
            max_result_bytes=settings.query_max_result_bytes,
            max_run_seconds=settings.query_max_run_seconds,
            max_memory_bytes=settings.query_max_memory_bytes,
            runs_per_minute=settings.query_runs_per_minute,
            threads=max(1, settings.query_threads),
            threads_per_workspace=max(1, settings.query_threads_per_workspace),
            max_queue_seconds=settings.query_max_queue_seconds,
        )

    def check_timeframe(self, from_ms: int, to_ms: int) -> None:
        """400 naming the field when the timeframe is reversed, too long, or wholly
        before any stored event (``check_epoch``)."""
        check_order(from_ms, to_ms)
        if to_ms - from_ms > self.max_timeframe_ms:
            days = self.max_timeframe_ms / DAY_MS
            raise BadRequest(
                message="Invalid timeframe",
                errors=[
                    {"field": "to", "message": f"the timeframe may span at most {days:g} days"}
                ],
            )
        check_epoch(from_ms, to_ms)

    def run_options(self, limit: int | None = None, **given: Any) -> RunOptions:
        """Options of a statement within these limits (the engine stops it at them)."""
        return RunOptions(
            limit=RunOptions().limit if limit is None else limit,
            max_execution_s=self.max_run_seconds,
            max_result_bytes=self.max_result_bytes,
            max_memory_bytes=self.max_memory_bytes,
            **given,
        )

    def describe_size(self) -> str:
        return _describe_bytes(self.max_result_bytes)


def _describe_bytes(size: int) -> str:
    return f"{size // MIB}MB" if size % MIB == 0 else f"{size} bytes"


def store_failure_message(
    failure: StoreError, limits: RunLimits, patterns: PatternFields | None = None
) -> str:
    """What a failed run reports: the cause in the query's terms, never the engine's text.

    Known by the engine's error code; one without a sentence of its own is named by
    its code, which is all an operator needs to look it up. ``patterns`` name the
    fields whose pattern the engine may have failed to compile.
    """
    code = failure.code
    patterns = patterns or PatternFields()
    if code == TIMEOUT_EXCEEDED:
        return timeout_message(limits.max_run_seconds)
    if code == TOO_MANY_ROWS_OR_BYTES:
        return result_too_large_message(limits)
    if code == MEMORY_LIMIT_EXCEEDED:
        limit = _describe_bytes(limits.max_memory_bytes)
        return (
            f"the query needed more memory than its limit of {limit};"
            " narrow the timeframe, add filters or group by fewer keys"
        )
    if code == CANNOT_COMPILE_REGEXP:
        return f"{_which('regular expression', patterns.regex)} is not valid RE2 syntax"
    if code == CANNOT_PARSE_ESCAPE_SEQUENCE:
        where = _which("LIKE pattern", patterns.like)
        return (
            f"{where} ends in a lone backslash in some events (read from the key it names);"
            " a backslash escapes the character after it"
        )
    return f"the events store could not run the query ({describe_code(code)})"


def _which(what: str, fields: tuple[str, ...]) -> str:
    if len(fields) == 1:
        return f"the {what} in {fields[0]}"
    if fields:
        return f"a {what} of the query ({', '.join(fields)})"
    return f"a {what} of the query"


def timeout_message(max_run_seconds: float) -> str:
    return (
        f"the query run took longer than its limit of {max_run_seconds:g} s; "
        "narrow the timeframe or add filters"
    )


def queue_timeout_message(max_queue_seconds: float) -> str:
    return (
        f"the query run waited longer than {max_queue_seconds:g} s for a free worker "
        "(the server is busy); try again shortly"
    )


def result_too_large_message(limits: RunLimits) -> str:
    return (
        f"the result is larger than the limit of {limits.describe_size()}; "
        "ask for fewer events (limit), fewer keys or fewer groups"
    )
