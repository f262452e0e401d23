"""Time buckets of a run: their width (granularity), how many, and a row's bucket."""

from __future__ import annotations

from limelight.query.sql import Params
from limelight.times import Timeframe

MAX_BUCKETS = 1_000
TARGET_BUCKETS = 60
# Steps a default granularity is rounded up to, so buckets fall on readable times.
NICE_STEPS_MS = tuple(
    s * 1000
    for s in (1, 5, 10, 15, 30, 60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
)


def default_granularity(timeframe: Timeframe) -> int:
    """The first readable step giving at most about 60 buckets over the timeframe."""
    span = max(1, timeframe.to_ms - timeframe.from_ms)
    for step in NICE_STEPS_MS:
        if span / step <= TARGET_BUCKETS:
            return step
    day = NICE_STEPS_MS[-1]
    return -(-span // (TARGET_BUCKETS * day)) * day


def granularity_for(timeframe: Timeframe, requested: int | None) -> int:
    span = max(1, timeframe.to_ms - timeframe.from_ms)
    if requested is None or requested <= 0:
        return default_granularity(timeframe)
    return max(requested, -(-span // MAX_BUCKETS))  # never more than MAX_BUCKETS buckets


def buckets(timeframe: Timeframe, granularity_ms: int) -> int:
    """How many buckets of ``granularity_ms`` cover the timeframe (as ``results`` lays them)."""
    return max(1, -(-(timeframe.to_ms - timeframe.from_ms) // granularity_ms))


def bucket_sql(params: Params, timeframe: Timeframe, granularity: int) -> str:
    """The start of a row's bucket, unix milliseconds (buckets are aligned to ``from``)."""
    start = params.add(timeframe.from_ms, "Int64")
    step = params.add(granularity, "Int64")
    return f"{start} + intDiv(toUnixTimestamp64Milli(timestamp) - {start}, {step}) * {step}"
