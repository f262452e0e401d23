"""The service overview: requests, errors and latency per service, per operation, and a
service's errors by message.

Pure (see ``limelight.query``). A service's requests are its entry spans
(kind ``SERVER`` or ``CONSUMER``, where a call or a message enters it); a
service without any in the timeframe counts its root spans instead (a batch
job, a client-only service). Errors are those of the spans counted with
status ``ERROR``; latency the exact percentiles (``quantileExactInclusive``,
as a query run's P50/P95/P99) of their ``duration``, skipping spans without one.

Each statement is one pass over the timeframe's spans of the dataset (the
sort key's prefix), grouped by the service (a LowCardinality column) or by
the span name of one service: the entry and the root figures are both
aggregated, and the choice between them is made over the groups of each
service (a window over the grouped rows). The per-bucket series ride in the
same pass as -Resample arrays, as a calculations run's do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from limelight.query.buckets import buckets
from limelight.query.keys import StoredTypes
from limelight.query.plans import CompiledQuery, Timeframe
from limelight.query.scope import Scope
from limelight.query.spans import SpanSql, holds_spans, spans_where
from limelight.query.sql import Params

MAX_GROUPS = 1_000
LEVELS = (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))
OVERVIEW_COLUMNS = ("grp", "requests", "errors", "latency")


@dataclass(frozen=True)
class Series:
    """Per-bucket requests and errors: ``granularity_ms`` wide, aligned to ``from``."""

    timeframe: Timeframe
    granularity_ms: int

    @property
    def count(self) -> int:
        return buckets(self.timeframe, self.granularity_ms)


@dataclass(frozen=True)
class OverviewPlan:
    statement: CompiledQuery
    series: Series | None


def overview_statement(
    scope: Scope,
    table: str,
    dataset: str,
    timeframe: Timeframe,
    stored: StoredTypes,
    *,
    service: str | None = None,
    series: Series | None = None,
    limit: int = MAX_GROUPS,
) -> OverviewPlan | None:
    """Per service (or, given ``service``, per span name of it): requests, errors, the
    latency percentiles and, with ``series``, requests and errors per bucket. None when
    no event of the tenant is a span: nothing to read."""
    if not holds_spans(stored):
        return None
    params = Params()

    def of_service(p: Params) -> list[str]:
        return [f"service = {p.add(service, 'String')}"] if service is not None else []

    cond = spans_where(scope, params, dataset, timeframe, stored, of_service, ids_read=False)
    span = SpanSql.of(stored, params)
    group = "service" if service is None else span.name
    levels = ", ".join(f"{level:g}" for _, level in LEVELS)
    sides = {"e": span.is_entry, "r": span.is_root}
    columns = [f"{group} AS grp"]
    for side, counted in sides.items():
        columns += [
            f"countIf({counted}) AS {side}_n",
            f"countIf({counted} AND {span.is_error}) AS {side}_err",
            f"quantilesExactInclusiveIf({levels})({span.latency}, {counted}) AS {side}_q",
        ]
    if series is not None:
        start = params.add(timeframe.from_ms, "Int64")
        step = params.add(series.granularity_ms, "Int64")
        index = f"toUInt32(intDiv(toUnixTimestamp64Milli(timestamp) - {start}, {step}))"
        resample = f"0, {series.count:d}, 1"
        for side, counted in sides.items():
            columns += [
                f"countIfResample({resample})({counted}, {index}) AS {side}_sn",
                f"countIfResample({resample})({counted} AND {span.is_error}, {index}) AS {side}_se",
            ]
    # The service's entry spans when it has any (over all its groups), else its roots.
    columns.append("sum(e_n) OVER () > 0 AS by_entry" if service else "e_n > 0 AS by_entry")
    inner = scope.select(
        ", ".join(columns),
        table,
        cond,
        f" AND ({span.is_entry} OR {span.is_root}) GROUP BY grp",
    )
    chosen = [
        "grp",
        "if(by_entry, e_n, r_n) AS requests",
        "if(by_entry, e_err, r_err) AS errors",
        "if(by_entry, e_q, r_q) AS latency",
    ]
    names = list(OVERVIEW_COLUMNS)
    if series is not None:
        chosen += ["if(by_entry, e_sn, r_sn) AS s_requests", "if(by_entry, e_se, r_se) AS s_errors"]
        names += ["s_requests", "s_errors"]
    order = "grp ASC" if service is None else "requests DESC, grp ASC"
    sql = scope.around(
        inner,
        ", ".join(chosen),
        f" WHERE requests > 0 ORDER BY {order} LIMIT {params.add(limit, 'UInt32')}",
    )
    return OverviewPlan(scope.statement(sql, params, names), series)


def shape_overview(plan: OverviewPlan, rows: list[dict[str, Any]], name: str) -> list[Any]:
    """The rows as ``[{<name>, requests, errors, errorRate, p50, p95, p99, series?}]``."""
    out = []
    for row in rows:
        requests, errors = int(row["requests"]), int(row["errors"])
        latency = list(row["latency"])
        item: dict[str, Any] = {
            name: row["grp"],
            "requests": requests,
            "errors": errors,
            "errorRate": errors / requests if requests else 0.0,
        }
        for (label, _), value in zip(LEVELS, latency or [None] * len(LEVELS), strict=True):
            item[label] = _finite(value)
        if plan.series is not None:
            step, frm = plan.series.granularity_ms, plan.series.timeframe.from_ms
            item["series"] = [
                {"time": frm + i * step, "requests": int(n), "errors": int(e)}
                for i, (n, e) in enumerate(zip(row["s_requests"], row["s_errors"], strict=True))
            ]
        out.append(item)
    return out


def _finite(value: Any) -> float | None:
    """A percentile, or None when no counted span had a duration (the engine says NaN)."""
    if value is None:
        return None
    number = float(value)
    return None if number != number else number


ERROR_COLUMNS = ("error", "count", "last", "traceId", "operations")
MAX_OPERATIONS_PER_ERROR = 10


def errors_statement(
    scope: Scope,
    table: str,
    dataset: str,
    timeframe: Timeframe,
    stored: StoredTypes,
    service: str,
    limit: int,
) -> CompiledQuery | None:
    """A service's failed spans (status ``ERROR``, any kind) grouped by their ``error``
    message: how many, the newest one's time and trace, and the span names they failed in."""
    if not holds_spans(stored):
        return None
    params = Params()
    cond = spans_where(
        scope,
        params,
        dataset,
        timeframe,
        stored,
        lambda p: [f"service = {p.add(service, 'String')}"],
    )
    span = SpanSql.of(stored, params)
    columns = ", ".join(
        [
            f"{span.error} AS error",
            "count() AS count",
            "toUnixTimestamp64Milli(max(timestamp)) AS last",
            f"argMax({span.trace_id}, timestamp) AS traceId",
            f"arraySort(groupUniqArray({MAX_OPERATIONS_PER_ERROR:d})({span.name})) AS operations",
        ]
    )
    tail = (
        f" AND {span.is_error} GROUP BY error ORDER BY count DESC, last DESC, error ASC"
        f" LIMIT {params.add(limit, 'UInt32')}"
    )
    return scope.statement(scope.select(columns, table, cond, tail), params, ERROR_COLUMNS)


def shape_errors(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "error": row["error"],
            "count": int(row["count"]),
            "lastSeen": int(row["last"]),
            "traceId": row["traceId"],
            "operations": list(row["operations"]),
        }
        for row in rows
    ]
