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
            duration=f"ifNull({DURATION_COLUMN}, 0)" if "number" in held[DURATION] else "0",
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
    timeframe: Timeframe,
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
    return scope.where(
        params,
        lambda p: [
            f"dataset = {p.add(dataset, 'String')}",
            f"timestamp >= fromUnixTimestamp64Milli({p.add(timeframe.from_ms, 'Int64')})",
            f"timestamp < fromUnixTimestamp64Milli({p.add(timeframe.to_ms, 'Int64')})",
            *held,
            *more(p),
        ],
    )


def filters_sql(filters: Sequence[Filter], params: Params, stored: StoredTypes) -> list[str]:
    """The query runs' filters (every operation of ``operators``), as span conditions."""
    return [filter_sql(f, params, stored) for f in filters]
