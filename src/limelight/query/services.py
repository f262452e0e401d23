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
the span name of one service. The entry spans' figures come first; the
roots' are read only for the services the first pass found without entry
spans (the parent span id is read then alone). The per-bucket series ride in
the same pass as -Resample arrays, as a calculations run's do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from limelight.query.buckets import buckets
from limelight.query.keys import StoredTypes
from limelight.query.plans import CompiledQuery, Timeframe
from limelight.query.scope import Condition, Scope
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


Run = Callable[[CompiledQuery], list[dict[str, Any]]]


@dataclass(frozen=True)
class OverviewPlan:
    """The overview's statements, run in turn by ``answer``: the entry spans' figures
    first; the roots' only for the services that have no entry span (a second statement
    only when one has none)."""

    entries: CompiledQuery
    roots: Callable[[list[str] | None], CompiledQuery]  # of these services (None: all)
    both: Callable[[], CompiledQuery]  # entry and root figures in one pass
    series: Series | None
    service: str | None
    limit: int

    def answer(self, run: Run) -> list[dict[str, Any]]:
        """The rows: ``grp, requests, errors, latency`` (with ``series``, ``s_requests,
        s_errors``), in the overview's order."""
        rows = run(self.entries)
        if self.service is not None:
            # Only entry spans were grouped: no row, and the service has none.
            return rows or run(self.roots(None))
        # Every service with a span is a row; one without entry spans counts its roots.
        missing = [str(r["grp"]) for r in rows if not r["requests"]]
        if not missing:
            return rows
        by_root = {r["grp"]: r for r in run(self.roots(missing))}
        kept = [r if r["requests"] else by_root.get(r["grp"]) for r in rows]
        out = [r for r in kept if r is not None]
        if len(out) < len(rows) and len(rows) >= self.limit:
            # A service with neither left a full page short: services past it may fill it.
            return run(self.both())
        return out


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
    no event of the tenant is a span: nothing to read.

    The entry spans are told by their kind alone; a root by its parent span id, a
    string per span, read only by the second statement: over 1M spans (2 cores,
    load 9, medians of 9) the services took 216 ms against 313 ms for the entry and
    the root figures in one pass (``both``), a service's operations 234 against 384."""
    if not holds_spans(stored):
        return None
    args = _Overview(scope, table, dataset, timeframe, stored, service, series, limit)
    return OverviewPlan(
        # A service's operations: its entry spans alone. The services: every span, so
        # that a service without entry spans is a row (of no requests) all the same.
        args.side(lambda s: s.is_entry, only=service is not None),
        lambda services: args.side(lambda s: s.is_root, only=True, services=services),
        args.both,
        series,
        service,
        limit,
    )


@dataclass(frozen=True)
class _Overview:
    scope: Scope
    table: str
    dataset: str
    timeframe: Timeframe
    stored: StoredTypes
    service: str | None
    series: Series | None
    limit: int

    def _where(self, params: Params, services: list[str] | None = None) -> Condition:
        def more(p: Params) -> list[str]:
            out = [f"service = {p.add(self.service, 'String')}"] if self.service else []
            if services is not None:
                out.append(f"service IN {p.add(services, 'Array(String)')}")
            return out

        return spans_where(
            self.scope, params, self.dataset, self.timeframe, self.stored, more, ids_read=False
        )

    def _resample(self, params: Params) -> tuple[str, str]:
        """The bucket index of a span and the -Resample parameters."""
        assert self.series is not None
        start = params.add(self.timeframe.from_ms, "Int64")
        step = params.add(self.series.granularity_ms, "Int64")
        index = f"toUInt32(intDiv(toUnixTimestamp64Milli(timestamp) - {start}, {step}))"
        return index, f"0, {self.series.count:d}, 1"

    @property
    def _group(self) -> Callable[[SpanSql], str]:
        return lambda span: "service" if self.service is None else span.name

    @property
    def _order(self) -> str:
        return "grp ASC" if self.service is None else "requests DESC, grp ASC"

    def side(
        self,
        counted_of: Callable[[SpanSql], str],
        *,
        only: bool,
        services: list[str] | None = None,
    ) -> CompiledQuery:
        """The figures of the spans ``counted_of`` tells, per group; ``only``: of the
        groups that have such spans alone."""
        params = Params()
        cond = self._where(params, services)
        span = SpanSql.of(self.stored)
        counted = counted_of(span)
        columns = [
            f"{self._group(span)} AS grp",
            f"countIf({counted}) AS requests",
            f"countIf({counted} AND {span.is_error}) AS errors",
            f"quantilesExactInclusiveIf({_levels()})({span.latency}, {counted}) AS latency",
        ]
        names = list(OVERVIEW_COLUMNS)
        if self.series is not None:
            index, resample = self._resample(params)
            columns += [
                f"countIfResample({resample})({counted}, {index}) AS s_requests",
                f"countIfResample({resample})({counted} AND {span.is_error}, {index}) AS s_errors",
            ]
            names += ["s_requests", "s_errors"]
        tail = (
            f"{f' AND {counted}' if only else ''} GROUP BY grp ORDER BY {self._order}"
            f" LIMIT {params.add(self.limit, 'UInt32')}"
        )
        sql = self.scope.select(", ".join(columns), self.table, cond, tail)
        return self.scope.statement(sql, params, names)

    def both(self) -> CompiledQuery:
        """The entry and the root figures in one pass, the choice between them made over
        the groups of each service (a window over the grouped rows)."""
        params = Params()
        cond = self._where(params)
        span = SpanSql.of(self.stored)
        sides = {"e": span.is_entry, "r": span.is_root}
        columns = [f"{self._group(span)} AS grp"]
        for side, counted in sides.items():
            columns += [
                f"countIf({counted}) AS {side}_n",
                f"countIf({counted} AND {span.is_error}) AS {side}_err",
                f"quantilesExactInclusiveIf({_levels()})({span.latency}, {counted}) AS {side}_q",
            ]
        if self.series is not None:
            index, resample = self._resample(params)
            for side, counted in sides.items():
                columns += [
                    f"countIfResample({resample})({counted}, {index}) AS {side}_sn",
                    f"countIfResample({resample})({counted} AND {span.is_error}, {index})"
                    f" AS {side}_se",
                ]
        # The service's entry spans when it has any (over all its groups), else its roots.
        by_entry = "sum(e_n) OVER () > 0" if self.service else "e_n > 0"
        columns.append(f"{by_entry} AS by_entry")
        inner = self.scope.select(
            ", ".join(columns),
            self.table,
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
        if self.series is not None:
            chosen += [
                "if(by_entry, e_sn, r_sn) AS s_requests",
                "if(by_entry, e_se, r_se) AS s_errors",
            ]
            names += ["s_requests", "s_errors"]
        sql = self.scope.around(
            inner,
            ", ".join(chosen),
            f" WHERE requests > 0 ORDER BY {self._order} LIMIT {params.add(self.limit, 'UInt32')}",
        )
        return self.scope.statement(sql, params, names)


def _levels() -> str:
    return ", ".join(f"{level:g}" for _, level in LEVELS)


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
    span = SpanSql.of(stored)
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
