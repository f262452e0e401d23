"""Spans as SQL: the keys OpenTelemetry spans are stored with, read for their stored types.

A span is an event as ``ingest/otlp/spans.py`` writes it: ``traceId``,
``spanId``, ``parentSpanId`` (absent on a root), ``name``, ``kind``,
``duration`` (ms), ``status.code`` (``UNSET``, ``OK`` or ``ERROR``), ``error``
(the exception message of a failed span); the resource's ``service.name`` is
the ``service`` column and the span's start the event time. The trace search
and the service overview read these keys through ``StoredTypes``, as a run
reads its keys: only the types the tenant's events hold them as, and a key that
never holds a string (a dataset without spans) reads as nothing. What they test
or aggregate for every span (is it a span, its trace's hash, its duration, is it
a root, failed, an entry span) are columns the events table computes from these
keys as parts are written (DDL 0020), whatever types the keys are stored as: a
column of 1 to 8 bytes an event is read instead of the JSON column's paths.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from limelight.query.keys import StoredTypes
from limelight.query.plans import Timeframe
from limelight.query.scope import Condition, Scope
from limelight.query.spec import Filter
from limelight.query.sql import Params
from limelight.query.where import filter_sql

TRACE_ID = "traceId"
PARENT_SPAN_ID = "parentSpanId"
NAME = "name"
KIND = "kind"
DURATION = "duration"
STATUS_CODE = "status.code"
ERROR = "error"
SPAN_KEYS = (TRACE_ID, PARENT_SPAN_ID, NAME, KIND, DURATION, STATUS_CODE, ERROR)
# What a key that never holds a string or a number reads as: typed, so the aggregates
# over it keep a type.
NO_STRING = "CAST(NULL, 'Nullable(String)')"
NO_NUMBER = "CAST(NULL, 'Nullable(Float64)')"
# The span columns the events table computes from `data` as parts are written (DDL
# 0020): each is exactly the expression over the keys above it replaces, whatever types
# they are stored as.
TRACE_HASH = "trace_hash"  # cityHash64 of the trace id
DURATION_COLUMN = "span_duration"  # Nullable(Float64)
IS_SPAN = "is_span"  # a trace id and a kind, both non-empty strings
IS_ROOT = "is_root_span"  # no parent span id, or an empty one
IS_ERROR = "is_error_span"  # status.code ERROR
# Kind SERVER or CONSUMER: where a request enters a service (SigNoz, Jaeger and HyperDX
# count a service's requests on these), a server handling a call, a consumer a message.
IS_ENTRY = "is_entry_span"
# The hour a span starts in, as the trace projections (DDL 0021, 0022) key their rows: a
# number of hours since the epoch. The statements write it exactly so (the engine uses a
# projection only for the expressions it was built over).
HOUR_MS = 3_600_000
HOUR = f"intDiv(toUnixTimestamp64Milli(timestamp), {HOUR_MS})"
# A span's duration when the tenant's spans hold it as a number (0 without one): the one
# ``trace_ends`` sums.
SUMMED_DURATION = f"ifNull({DURATION_COLUMN}, 0)"
# A span's end in ms since the epoch, a double (within 2**-12 ms of the sum at today's
# times): ``trace_ends`` keeps the greatest, which the slowest traces are drawn by.
ABSOLUTE_END = f"toUnixTimestamp64Milli(timestamp) + {SUMMED_DURATION}"


def end_in_hour(duration: str) -> str:
    """A span's end in ms past the start of its hour; ``trace_ends`` keeps the greatest
    of ``end_in_hour(SUMMED_DURATION)``."""
    return f"toUnixTimestamp64Milli(timestamp) % {HOUR_MS} + {duration}"


@dataclass(frozen=True)
class SpanSql:
    """The span keys as SQL over the events table."""

    trace_id: str  # Nullable(String)
    trace: str  # UInt64: the trace id's hash, as traces are grouped
    name: str  # Nullable(String)
    duration: str  # ms, Float64; a span without one lasts 0
    latency: str  # ms, Nullable(Float64): NULL without one, so percentiles skip it
    is_root: str  # no parent span id (absent, or empty)
    is_error: str  # status.code ERROR
    is_entry: str  # kind SERVER or CONSUMER
    error: str  # Nullable(String): the failed span's message

    @classmethod
    def of(cls, stored: StoredTypes) -> SpanSql:
        """The keys as the span columns of DDL 0020 hold them, or as constants when the
        tenant's events never hold the key as the type the column reads."""
        held = {key: stored.expr(key).scalars for key in SPAN_KEYS}
        return cls(
            trace_id=held[TRACE_ID].get("string") or NO_STRING,
            trace=TRACE_HASH,
            name=held[NAME].get("string") or NO_STRING,
            duration=SUMMED_DURATION if "number" in held[DURATION] else "0",
            latency=DURATION_COLUMN if "number" in held[DURATION] else NO_NUMBER,
            is_root=IS_ROOT if "string" in held[PARENT_SPAN_ID] else "1",
            is_error=IS_ERROR if "string" in held[STATUS_CODE] else "0",
            is_entry=IS_ENTRY if "string" in held[KIND] else "0",
            error=held[ERROR].get("string") or NO_STRING,
        )


def holds_spans(stored: StoredTypes) -> bool:
    """False when no event of the tenant holds a trace id and a kind as strings: there
    is no span to read."""
    return all("string" in stored.expr(key).scalars for key in (TRACE_ID, KIND))


def spans_where(
    scope: Scope,
    params: Params,
    dataset: str,
    timeframe: Timeframe | Sequence[Timeframe],
    stored: StoredTypes,
    more: Callable[[Params], Sequence[str]] = lambda _: (),
    *,
    ids_read: bool = True,
) -> Condition:
    """The tenant, the dataset and the timeframe (the sort key's prefix, so the engine
    reads only their granules), the spans among their events, then the conditions
    ``more`` adds.

    A span is an event with a trace id and a kind: OTLP log records in the same
    dataset may carry a trace id (and a span id), never a kind. A statement that
    groups by trace reads the ``is_span`` column (DDL 0020: both non-empty strings).
    One that reads no trace id (``ids_read=False``: the service overview) tests that
    the event holds one as a string, from the JSON column's type of each value alone,
    and a non-empty kind: reading the ids to see that they are not empty cost 35 ms
    of 110 for the overview of 1M spans (an OTLP span never has an empty one), and
    ``is_span`` would leave out an event whose trace id is an empty string, which the
    overview has always counted.
    """
    if ids_read:
        held = [IS_SPAN]
    else:
        trace_id, kind = (stored.expr(key).scalars["string"] for key in (TRACE_ID, KIND))
        held = [f"NOT {trace_id}.null", f"{kind} != ''"]
    frames = [timeframe] if isinstance(timeframe, Timeframe) else list(timeframe)

    def within(p: Params, frame: Timeframe) -> str:
        return (
            f"timestamp >= fromUnixTimestamp64Milli({p.add(frame.from_ms, 'Int64')})"
            f" AND timestamp < fromUnixTimestamp64Milli({p.add(frame.to_ms, 'Int64')})"
        )

    def times(p: Params) -> str:
        if len(frames) == 1:
            return within(p, frames[0])
        return "(" + " OR ".join(f"({within(p, f)})" for f in frames) + ")"

    return scope.where(
        params,
        lambda p: [f"dataset = {p.add(dataset, 'String')}", times(p), *held, *more(p)],
    )


def span_hours_where(
    scope: Scope, params: Params, dataset: str, hours: tuple[int, int]
) -> Condition:
    """The tenant's spans of a dataset that start in the whole hours ``hours`` (first,
    end: hour numbers since the epoch, ``HOUR``): conditions over the keys of the trace
    projections (DDL 0021, 0022) alone, so the engine reads their rows instead of the spans."""
    first, end = hours
    return scope.where(
        params,
        lambda p: [
            f"dataset = {p.add(dataset, 'String')}",
            f"{HOUR} >= {p.add(first, 'Int64')}",
            f"{HOUR} < {p.add(end, 'Int64')}",
            IS_SPAN,
        ],
    )


def filters_sql(filters: Sequence[Filter], params: Params, stored: StoredTypes) -> list[str]:
    """The query runs' filters (every operation of ``operators``), as span conditions."""
    return [filter_sql(f, params, stored) for f in filters]
