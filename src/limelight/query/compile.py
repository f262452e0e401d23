"""The compiler: validated query + tenant + timeframe -> ClickHouse SQL and parameters.

Pure: no engine, no settings. The tenant filter and the timeframe are injected
into every statement, every value is a bound parameter, every statement ends
in a LIMIT and carries the run's limits as SETTINGS. The same SQL runs on chDB
and on a ClickHouse server.

A run with calculations compiles to one ``aggregates`` statement giving one
row per group (``_total`` = 1) and one row per time bucket and group
(``_total`` = 0): grouped by the groups alone with the series as -Resample
arrays when the groups have few values, else by grouping sets. With an offset
(paging) it is two statements, ``aggregates`` and ``series``, since only the
totals skip the offset. A run without calculations compiles to ``newest`` (the
page by time alone, see ``_compile_events``), when it has no filters and the
timeframe is longer than an hour also to ``recent`` (the same over the
timeframe's last hour), ``events`` (the exact page, newest first by time and
id) and ``count``; the runner executes ``newest`` only when ``recent`` holds
too few events, ``events`` only when ``newest`` cannot tell the page and
``count`` only when the page cannot tell the count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from limelight.query.calculations import (
    CALCULATIONS,
    COUNT_SERIES,
    COUNT_WITH_KEY,
    COUNT_WITH_KEY_SERIES,
    value_name,
)
from limelight.query.keys import SYSTEM_FIELDS, UNKNOWN, KeyExpr, StoredTypes
from limelight.query.operators import OPERATORS, kinds_of, list_values, value_kind
from limelight.query.spec import MAX_LIMIT, Calculation, Filter, KeyRef, QueryFields
from limelight.query.sql import Params

MAX_OFFSET = 1_000_000
MAX_BUCKETS = 1_000
TARGET_BUCKETS = 60
MAX_SERIES_ROWS = 100_000
# Event pages ending within this many events are first read by time alone (`newest`).
NEWEST_MAX_ROWS = 1_000
# An unfiltered page is first looked for in this last stretch of the timeframe (`recent`).
RECENT_WINDOW_MS = 3_600_000
# Steps a default granularity is rounded up to, so buckets fall on readable times.
NICE_STEPS_MS = tuple(
    s * 1000
    for s in (1, 5, 10, 15, 30, 60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
)
_PARAM_TYPES = {"string": "String", "number": "Float64", "boolean": "Bool"}

# Group keys with few values by design (LowCardinality columns): see `_CalculationSql.resampled`.
FEW_VALUED_KEYS = frozenset({"_dataset", "_service", "_namespace"})
# -Resample holds a state per bucket for every group, whether the bucket has events or
# not: beyond this many buckets grouping sets (states only where there are events) win.
RESAMPLE_MAX_BUCKETS = 120
# A key that never holds a number, as a number: typed, so that aggregates over it
# have a type (an untyped NULL made `arrayConcat` of the series give NULL, not an array).
NO_NUMBER = "CAST(NULL, 'Nullable(Float64)')"
# A group key that holds no value in the events read: one typed null column, so the
# statement keeps its shape (every event in one null group).
NO_GROUP_VALUE = "CAST(NULL, 'Nullable(String)')"

# Namespace types that select on a typed column; any other type selects on `namespace`.
NAMESPACE_COLUMNS = {"dataset": "dataset", "service": "service", "namespace": "namespace"}

EVENT_COLUMNS = (
    "raw, toUnixTimestamp64Milli(timestamp) AS _timestamp, dataset AS _dataset, "
    "service AS _service, namespace AS _namespace, id AS _id"
)
EVENT_COLUMN_NAMES = ("raw", "_timestamp", "_dataset", "_service", "_namespace", "_id")


@dataclass(frozen=True)
class Timeframe:
    """Unix milliseconds; ``from_ms`` inclusive, ``to_ms`` exclusive."""

    from_ms: int
    to_ms: int


@dataclass(frozen=True)
class RunOptions:
    limit: int = 100
    offset: int = 0
    granularity_ms: int | None = None
    max_execution_s: float = 10.0
    max_result_bytes: int = 6 * 1024 * 1024
    max_memory_bytes: int = 2048 * 1024 * 1024


@dataclass(frozen=True)
class CompiledQuery:
    sql: str
    params: dict[str, Any]
    # The names the statement selects, in order: the store accepts only an answer
    # with exactly these (see ``store.events.base.decode_result``).
    columns: tuple[str, ...]


@dataclass(frozen=True)
class PatternFields:
    """The fields holding patterns the engine compiles as it runs (``filters[2].value``,
    ``needle.value``), so that a failure to compile one can name them."""

    regex: tuple[str, ...] = ()
    like: tuple[str, ...] = ()  # LIKE patterns read from another key of the event


@dataclass(frozen=True)
class Plan:
    """What to run, and what ``results.shape`` needs to turn the rows into the run's data.

    Result columns are named by position (``g0_0``.. for the kinds of each
    group-by, ``v0``.. for calculations), so user-chosen names never reach the
    SQL text.
    """

    kind: Literal["calculations", "events"]
    statements: dict[str, CompiledQuery]
    granularity_ms: int
    timeframe: Timeframe
    groups: tuple[tuple[str, int], ...] = ()  # (group-by key, number of kind columns)
    values: tuple[str, ...] = ()
    keys: tuple[str, ...] | None = None  # events: only these keys, None = whole events
    limit: int = 100
    offset: int = 0
    # Events: without filters or a needle the count reads only the typed columns, which
    # the engine answers from the primary key (0.015 s at 10M events): run it beside
    # the page rather than after it.
    cheap_count: bool = False
    patterns: PatternFields = PatternFields()


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


def _settings(options: RunOptions) -> str:
    # Dynamic (mixed-type) JSON values are allowed as group and sort keys: grouping by
    # the stored value keeps 5 and "5" apart, which is what the user sent.
    return (
        f" SETTINGS max_execution_time = {float(options.max_execution_s):g},"
        f" max_result_bytes = {int(options.max_result_bytes):d}, result_overflow_mode = 'throw',"
        f" max_memory_usage = {int(options.max_memory_bytes):d},"
        " allow_suspicious_types_in_group_by = 1, allow_suspicious_types_in_order_by = 1,"
        " output_format_json_quote_64bit_integers = 0, output_format_json_quote_denormals = 0"
    )


class _Where:
    """Builds the WHERE clause shared by a run's statements (each with its own Params)."""

    def __init__(
        self, fields: QueryFields, workspace_id: str, environment_id: str, stored: StoredTypes
    ) -> None:
        self.fields = fields
        self.workspace_id = workspace_id
        self.environment_id = environment_id
        self.stored = stored

    def render(self, params: Params, timeframe: Timeframe) -> str:
        # :IMPORTANT: the tenant filter comes first and is never optional.
        parts = [
            f"workspace_id = {params.add(self.workspace_id, 'String')}",
            f"environment_id = {params.add(self.environment_id, 'String')}",
            f"timestamp >= fromUnixTimestamp64Milli({params.add(timeframe.from_ms, 'Int64')})",
            f"timestamp < fromUnixTimestamp64Milli({params.add(timeframe.to_ms, 'Int64')})",
        ]
        parts += self._namespaces(params)
        filters = [_filter_sql(f, params, self.stored) for f in self.fields.filters or []]
        if filters:
            joiner = " OR " if self.fields.filter_combination == "OR" else " AND "
            parts.append("(" + joiner.join(filters) + ")")
        if self.fields.needle is not None:
            parts.append(_needle_sql(self.fields, params))
        return " AND ".join(parts)

    def _namespaces(self, params: Params) -> list[str]:
        by_column: dict[str, list[str]] = {}
        for ns in self.fields.namespaces or []:
            by_column.setdefault(NAMESPACE_COLUMNS.get(ns.type, "namespace"), []).append(ns.value)
        out = []
        for column in ("dataset", "service", "namespace"):
            if column in by_column:
                values = [params.add(v, "String") for v in by_column[column]]
                # `=` for one value: the engine then reads newest-first pages in key order
                # (0.018 s against 0.089 s with IN for the newest 100 of 10M events).
                if len(values) == 1:
                    out.append(f"{column} = {values[0]}")
                else:
                    out.append(f"{column} IN ({', '.join(values)})")
        return out


def _needle_sql(fields: QueryFields, params: Params) -> str:
    needle = fields.needle
    assert needle is not None
    if needle.isRegex:
        pattern = needle.value if needle.matchCase else "(?i)" + needle.value
        return f"match(raw, {params.add(pattern, 'String')})"
    func = "position" if needle.matchCase else "positionCaseInsensitive"
    found = f"{func}(raw, {params.add(needle.value, 'String')}) > 0"
    # Implied by `found` (both fold ASCII letters only), so it never changes the
    # answer: it is there for the ngram skip index on lower(raw) (DDL 0003),
    # which rules out the granules that cannot hold the needle.
    pattern = "%" + _like_escape(needle.value.translate(_ASCII_LOWER)) + "%"
    return f"({found} AND lower(raw) LIKE {params.add(pattern, 'String')})"


_ASCII_LOWER = str.maketrans({chr(c): chr(c + 32) for c in range(ord("A"), ord("Z") + 1)})


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _operand(value: Any, kind: str, params: Params, stored: StoredTypes) -> str:
    if isinstance(value, KeyRef):
        ref = stored.expr(value.key).scalars.get(value_kind(value))
        return ref if ref is not None else "NULL"
    return params.add(value, _PARAM_TYPES[kind])


def _positive_sql(
    op_name: str, key: KeyExpr, value: Any, params: Params, stored: StoredTypes
) -> str:
    """The SQL of a positive operation; "0" when the key can never match it."""
    op = OPERATORS[op_name]
    if op.shape == "list":
        tests = []
        for kind, group in kinds_of(list_values(value)):
            scalar = key.scalars.get(kind)
            if scalar is not None:
                items = ", ".join(params.add(v, _PARAM_TYPES[kind]) for v in group)
                tests.append(f"{scalar} IN ({items})")
        return "(" + " OR ".join(tests) + ")" if tests else "0"
    kind = value_kind(value)
    scalar = key.scalars.get(kind)
    if op.scalar is None or kind not in (op.scalar_kinds or op.kinds):
        scalar = None
    arrays = key.arrays.get(kind, ()) if op.array is not None else ()
    if scalar is None and not arrays:
        return "0"  # the key never holds a value this operation could match
    operand = _operand(value, kind, params, stored)
    tests = [op.scalar.format(k=scalar, v=operand)] if op.scalar and scalar else []
    tests += [op.array.format(a=a, v=operand) for a in arrays if op.array]
    return tests[0] if len(tests) == 1 else "(" + " OR ".join(tests) + ")"


def _filter_sql(flt: Filter, params: Params, stored: StoredTypes) -> str:
    op = OPERATORS[flt.operation]
    key = stored.expr(flt.key)
    if op.presence is not None:
        return op.presence.format(exists=key.exists)
    if op.negates is not None:
        positive = _positive_sql(op.negates, key, flt.value, params, stored)
        if key.is_system:
            return f"NOT ifNull({positive}, 0)"
        return f"({key.exists} AND NOT ifNull({positive}, 0))"
    return _positive_sql(op.name, key, flt.value, params, stored)


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def _limit(fields: QueryFields, options: RunOptions) -> int:
    limit = options.limit if fields.limit is None else min(options.limit, fields.limit)
    return _clamp(limit, 1, MAX_LIMIT)


def _group_columns(groups: Sequence[str], stored: StoredTypes) -> list[list[tuple[str, str]]]:
    """Per group key, its (SQL, alias) parts: one per kind the key can hold.

    Grouping by the kinds' typed subcolumns rather than the mixed-type value is
    several times faster, and keeps "5" and 5 apart.
    """
    out = []
    for i, key in enumerate(groups):
        kinds = list(stored.expr(key).scalars.values()) or [NO_GROUP_VALUE]
        out.append([(sql, f"g{i}_{j}") for j, sql in enumerate(kinds)])
    return out


def _order_sql(
    fields: QueryFields, groups: list[list[tuple[str, str]]], names: Sequence[str]
) -> str:
    aliases = {name: [f"v{i}"] for i, name in enumerate(names)}
    keys = [g.key for g in fields.group_bys or []]
    aliases.update({key: [a for _, a in parts] for key, parts in zip(keys, groups, strict=True)})
    terms: dict[str, str] = {}
    for order in fields.orders or []:
        for alias in aliases[order.key]:
            terms.setdefault(alias, "ASC" if order.order == "ASCENDING" else "DESC")
    if not terms and names:
        terms["v0"] = "DESC"  # default: the first calculation, largest first
    for parts in groups:  # ties broken by the groups: stable pages and golden files
        for _, alias in parts:
            terms.setdefault(alias, "ASC")
    return ", ".join(f"{alias} {direction}" for alias, direction in terms.items())


@dataclass(frozen=True)
class _Values:
    names: list[str]
    totals: list[str]  # one aggregate per value
    series: list[str] | None  # per value, an array over the buckets; None: no series form


def _select_values(
    fields: QueryFields, stored: StoredTypes, resample: str = "", index: str = ""
) -> _Values:
    """The calculations' names and SQL, in the query's order.

    ``resample`` (``0, buckets, 1``) and ``index`` (the bucket of a row) fill the
    series forms; without them there are none.
    """
    names: list[str] = []
    totals: list[str] = []
    series: list[str] | None = [] if resample else None
    for calc in fields.calculations or []:
        names.append(value_name(calc.operator, calc.key, calc.alias))
        total, per_bucket = _calculation_sql(calc, stored, resample, index)
        totals.append(total)
        if series is not None and per_bucket is not None:
            series.append(per_bucket)
        else:
            series = None
    if not names:  # group_bys alone: count per group
        names, totals = ["COUNT"], ["count()"]
        series = [COUNT_SERIES.format(r=resample, i=index)] if resample else None
    return _Values(names, totals, series)


def _value_aliases(values: _Values) -> tuple[str, ...]:
    return tuple(f"v{i}" for i in range(len(values.totals)))


def _calculation_sql(
    calc: Calculation, stored: StoredTypes, resample: str, index: str
) -> tuple[str, str | None]:
    """One calculation's total and, when ``resample`` is given and it has one, its series.

    Each template is formatted exactly once: the SQL it is given holds key names,
    which may contain braces (``a{b`` is a legal JSON key), and a second ``format``
    would read those as placeholders.
    """
    spec = CALCULATIONS[calc.operator]
    if calc.key is None:
        args: dict[str, str] = {}
        total, per_bucket = spec.template, spec.series
    elif calc.operator == "COUNT":
        args = {"e": stored.expr(calc.key).exists}
        total, per_bucket = COUNT_WITH_KEY, COUNT_WITH_KEY_SERIES
    elif spec.per_kind:
        parts = [
            f"ifNull({spec.template.format(k=expr)}, 0)"
            for expr in stored.expr(calc.key).scalars.values()
        ]
        return " + ".join(parts) or "0", None
    else:
        args = {"n": stored.expr(calc.key).scalars.get("number", NO_NUMBER)}
        total, per_bucket = spec.template, spec.series
    if not resample or per_bucket is None:
        return total.format(**args), None
    return total.format(**args), per_bucket.format(r=resample, i=index, **args)


def _buckets(timeframe: Timeframe, granularity_ms: int) -> int:
    """How many buckets of ``granularity_ms`` cover the timeframe (as ``results`` lays them)."""
    return max(1, -(-(timeframe.to_ms - timeframe.from_ms) // granularity_ms))


def _compile_calculations(
    fields: QueryFields, where: _Where, table: str, timeframe: Timeframe, options: RunOptions
) -> Plan:
    if not fields.calculations:
        fields = fields.model_copy(update={"calculations": []})
    groups = [g.key for g in fields.group_bys or []]
    group_parts = _group_columns(groups, where.stored)
    group_cols = [f"{sql} AS {alias}" for parts in group_parts for sql, alias in parts]
    group_aliases = [alias for parts in group_parts for _, alias in parts]
    limit = _limit(fields, options)
    offset = _clamp(options.offset, 0, MAX_OFFSET)
    granularity = granularity_for(timeframe, options.granularity_ms)
    sql = _CalculationSql(
        fields, table, group_parts, group_cols, group_aliases, limit, options, where.stored
    )

    compiled: Statements | None = None
    if offset == 0 and all(g in FEW_VALUED_KEYS for g in groups):
        compiled = sql.resampled(where, timeframe, granularity)
    if compiled is None and offset == 0:
        compiled = sql.grouping_sets(where, timeframe, granularity)
    if compiled is None:
        compiled = sql.paged(where, timeframe, granularity, offset)
    names, statements = compiled
    return Plan(
        kind="calculations",
        statements=statements,
        granularity_ms=granularity,
        timeframe=timeframe,
        groups=tuple((key, len(parts)) for key, parts in zip(groups, group_parts, strict=True)),
        values=tuple(names),
        limit=limit,
        offset=offset,
    )


Statements = tuple[list[str], dict[str, CompiledQuery]]  # value names, statements by name


@dataclass(frozen=True)
class _CalculationSql:
    """What the statements of a calculations run share; one method per way to run it."""

    fields: QueryFields
    table: str
    group_parts: list[list[tuple[str, str]]]
    group_cols: list[str]
    group_aliases: list[str]
    limit: int
    options: RunOptions
    stored: StoredTypes

    def _order(self, names: Sequence[str]) -> str:
        return _order_sql(self.fields, self.group_parts, names)

    def resampled(self, where: _Where, timeframe: Timeframe, granularity: int) -> Statements | None:
        """One pass grouped by the groups alone, the series as -Resample arrays.

        Each group's row holds its total and an array over the buckets; ARRAY JOIN
        turns them into the rows the grouping sets would give (``_total`` = 1 for
        the total, index 0). Grouping by (bucket, groups) hashes a composite key
        per event; this groups by the few-valued column alone: COUNT by service
        over 10M events took 0.19 s against 0.38 s. Only for groups with few
        values, at most RESAMPLE_MAX_BUCKETS buckets (a state per bucket and group)
        and calculations with a series form; None otherwise.
        """
        params = Params()
        cond = where.render(params, timeframe)
        start = params.add(timeframe.from_ms, "Int64")
        step = params.add(granularity, "Int64")
        buckets = _buckets(timeframe, granularity)
        if buckets > RESAMPLE_MAX_BUCKETS:
            return None
        index = f"toUInt32(intDiv(toUnixTimestamp64Milli(timestamp) - {start}, {step}))"
        resample = f"0, {buckets:d}, 1"
        values = _select_values(self.fields, self.stored, resample, index)
        if values.series is None:
            return None
        arrays = [
            f"arrayConcat([{total}], {series}) AS a{i}"
            for i, (total, series) in enumerate(zip(values.totals, values.series, strict=True))
        ]
        counts = COUNT_SERIES.format(r=resample, i=index)
        arrays.append(f"arrayConcat([count()], {counts}) AS a_")
        group_by = " GROUP BY " + ", ".join(self.group_aliases) if self.group_aliases else ""
        inner = (
            f"SELECT {', '.join([*self.group_cols, *arrays])} FROM {self.table}"
            f" WHERE {cond}{group_by}"
        )
        unrolled = ", ".join(
            [f"a{i} AS v{i}" for i in range(len(values.totals))]
            + ["a_ AS _count", f"range({buckets + 1:d}) AS _n"]
        )
        columns = ", ".join(
            [
                f"if(_n = 0, 0, {start} + (_n - 1) * {step}) AS _time",
                *self.group_aliases,
                *(f"v{i}" for i in range(len(values.totals))),
                "_count",
                "_n = 0 AS _total",
            ]
        )
        if self.group_aliases:  # per bucket the top groups, as with grouping sets
            kept = f" WHERE _count > 0 ORDER BY _total DESC, _time ASC, {self._order(values.names)}"
            kept += f" LIMIT {params.add(self.limit, 'UInt32')} BY _total, _time"
        else:  # the total is shown even when nothing matched
            kept = " WHERE _count > 0 OR _n = 0 ORDER BY _total DESC, _time ASC"
        sql = (
            f"SELECT {columns} FROM ({inner}) ARRAY JOIN {unrolled}{kept}"
            f" LIMIT {params.add(MAX_SERIES_ROWS + self.limit, 'UInt32')}{_settings(self.options)}"
        )
        names = ("_time", *self.group_aliases, *_value_aliases(values), "_count", "_total")
        return values.names, {"aggregates": CompiledQuery(sql, params.values, names)}

    def grouping_sets(self, where: _Where, timeframe: Timeframe, granularity: int) -> Statements:
        """One scan for both: grouping sets give the totals per group (``_total`` = 1)
        and the rows per bucket and group (``_total`` = 0). Measured at 1M events
        0.073 s against 0.037 + 0.098 s for the two statements."""
        values = _select_values(self.fields, self.stored)
        value_cols = [f"{sql} AS v{i}" for i, sql in enumerate(values.totals)]
        params = Params()
        cond = where.render(params, timeframe)
        select = ", ".join(
            [f"{_bucket(params, timeframe, granularity)} AS _time", *self.group_cols, *value_cols]
            + ["count() AS _count", "grouping(_time) AS _total"]
        )
        sets = ", ".join(self.group_aliases)
        # Per bucket, the top groups by the query's order (shaping keeps those in
        # `aggregates`); the totals are one more "bucket" and come first.
        per_set = (
            f" LIMIT {params.add(self.limit, 'UInt32')} BY _total, _time"
            if self.group_aliases
            else ""
        )
        sql = (
            f"SELECT {select} FROM {self.table} WHERE {cond}"
            f" GROUP BY GROUPING SETS (({sets}), (_time{', ' + sets if sets else ''}))"
            f" ORDER BY _total DESC, _time ASC, {self._order(values.names)}{per_set}"
            f" LIMIT {params.add(MAX_SERIES_ROWS + self.limit, 'UInt32')}{_settings(self.options)}"
        )
        names = ("_time", *self.group_aliases, *_value_aliases(values), "_count", "_total")
        return values.names, {"aggregates": CompiledQuery(sql, params.values, names)}

    def paged(
        self, where: _Where, timeframe: Timeframe, granularity: int, offset: int
    ) -> Statements:
        """With an offset, two statements: only the totals skip the offset."""
        values = _select_values(self.fields, self.stored)
        value_cols = [f"{sql} AS v{i}" for i, sql in enumerate(values.totals)]
        order = self._order(values.names)
        grouped = bool(self.group_aliases)
        params = Params()
        cond = where.render(params, timeframe)
        select = ", ".join([*self.group_cols, *value_cols, "count() AS _count"])
        group_by = " GROUP BY " + ", ".join(self.group_aliases) if grouped else ""
        agg_sql = (
            f"SELECT {select} FROM {self.table} WHERE {cond}{group_by} ORDER BY {order}"
            f" LIMIT {params.add(self.limit if grouped else 1, 'UInt32')}"
            f" OFFSET {params.add(offset if grouped else 0, 'UInt32')}{_settings(self.options)}"
        )
        aggregates_stmt = CompiledQuery(
            agg_sql, params.values, (*self.group_aliases, *_value_aliases(values), "_count")
        )
        params = Params()
        cond = where.render(params, timeframe)
        select = ", ".join(
            [f"{_bucket(params, timeframe, granularity)} AS _time", *self.group_cols, *value_cols]
        )
        select += ", count() AS _count"
        series_group = ", ".join(["_time", *self.group_aliases])
        per_bucket = (
            f" LIMIT {params.add(self.limit + offset, 'UInt32')} BY _time" if grouped else ""
        )
        series_sql = (
            f"SELECT {select} FROM {self.table} WHERE {cond} GROUP BY {series_group}"
            f" ORDER BY _time ASC, {order}{per_bucket}"
            f" LIMIT {params.add(MAX_SERIES_ROWS, 'UInt32')}{_settings(self.options)}"
        )
        return values.names, {
            "aggregates": aggregates_stmt,
            "series": CompiledQuery(
                series_sql,
                params.values,
                ("_time", *self.group_aliases, *_value_aliases(values), "_count"),
            ),
        }


def _bucket(params: Params, timeframe: Timeframe, granularity: int) -> str:
    """The start of a row's bucket, unix milliseconds (buckets are aligned to ``from``)."""
    start = params.add(timeframe.from_ms, "Int64")
    step = params.add(granularity, "Int64")
    return f"{start} + intDiv(toUnixTimestamp64Milli(timestamp) - {start}, {step}) * {step}"


def _compile_events(
    fields: QueryFields, where: _Where, table: str, timeframe: Timeframe, options: RunOptions
) -> Plan:
    limit = _limit(fields, options)
    offset = _clamp(options.offset, 0, MAX_OFFSET)
    statements: dict[str, CompiledQuery] = {}
    unfiltered = not fields.filters and fields.needle is None
    if offset + limit < NEWEST_MAX_ROWS:
        # The page by time alone, which the engine reads in key order and stops early,
        # and one event more: ``results.newest_page`` orders it by (time, id) and tells
        # when a tie at its end could hide events, and only then is `events` run.
        # Newest 100 of 10M events: 0.017 s against 0.022 s for `events`.
        def newest(frame: Timeframe) -> CompiledQuery:
            params = Params()
            cond = where.render(params, frame)
            return CompiledQuery(
                f"SELECT {EVENT_COLUMNS} FROM {table} WHERE {cond} ORDER BY timestamp DESC"
                f" LIMIT {params.add(offset + limit + 1, 'UInt32')}{_settings(options)}",
                params.values,
                EVENT_COLUMN_NAMES,
            )

        recent_from = timeframe.to_ms - RECENT_WINDOW_MS
        if unfiltered and recent_from > timeframe.from_ms:
            # Every event of the namespaces matches, so the last hour usually holds the
            # page: `recent` reads that hour alone (the engine skips the other days'
            # parts), and `newest` runs only when it holds too few events to tell the
            # page. Newest 100 of 10M events over 7 days: 0.007 s against 0.012 s.
            statements["recent"] = newest(Timeframe(recent_from, timeframe.to_ms))
        statements["newest"] = newest(timeframe)
    params = Params()
    cond = where.render(params, timeframe)
    if unfiltered:
        # Sorting by (timestamp, id) keeps the engine from reading in key order; so
        # first find the times of the page's events in key order (by timestamp
        # alone), then sort only the events at those times, which the primary key
        # finds. Every event at the page's oldest time is kept, so ties give the same
        # page. 0.021 s against 0.163 s for the newest 100 of 10M events (with `=` on
        # the dataset). Not with filters or a needle: a rare match makes it a second
        # scan (a needle over 10M events: 0.16 s with it, 0.12 s without).
        inner = where.render(params, timeframe)
        cond += (
            f" AND timestamp IN (SELECT timestamp FROM {table} WHERE {inner}"
            f" ORDER BY timestamp DESC LIMIT {params.add(limit + offset, 'UInt32')})"
        )
    events_sql = (
        f"SELECT {EVENT_COLUMNS} FROM {table} WHERE {cond} ORDER BY timestamp DESC, id DESC"
        f" LIMIT {params.add(limit, 'UInt32')} OFFSET {params.add(offset, 'UInt32')}"
        f"{_settings(options)}"
    )
    statements["events"] = CompiledQuery(events_sql, params.values, EVENT_COLUMN_NAMES)
    params = Params()
    cond = where.render(params, timeframe)
    count_sql = f"SELECT count() AS count FROM {table} WHERE {cond} LIMIT 1{_settings(options)}"
    statements["count"] = CompiledQuery(count_sql, params.values, ("count",))
    return Plan(
        kind="events",
        statements=statements,
        granularity_ms=granularity_for(timeframe, options.granularity_ms),
        timeframe=timeframe,
        keys=tuple(k.key for k in fields.keys) if fields.keys else None,
        limit=limit,
        offset=offset,
        cheap_count=unfiltered,
    )


def compile_run(
    fields: QueryFields,
    *,
    workspace_id: str,
    environment_id: str,
    table: str,
    timeframe: Timeframe,
    options: RunOptions,
    stored: StoredTypes = UNKNOWN,
) -> Plan:
    """Compile one run of a validated query for one tenant and timeframe.

    ``table`` is the events table name from the store (trusted, never user input);
    ``stored`` the types the query's JSON keys hold in the tenant's events, when known
    (see ``keys.StoredTypes``).
    """
    where = _Where(fields, workspace_id, environment_id, stored)
    if fields.calculations or fields.group_bys:
        plan = _compile_calculations(fields, where, table, timeframe, options)
    else:
        plan = _compile_events(fields, where, table, timeframe, options)
    return replace(plan, patterns=pattern_fields(fields))


def pattern_fields(fields: QueryFields) -> PatternFields:
    filters = list(enumerate(fields.filters or []))
    regex = [f"filters[{i}].value" for i, f in filters if f.operation == "MATCH_REGEX"]
    if fields.needle is not None and fields.needle.isRegex:
        regex.append("needle.value")
    like = [
        f"filters[{i}].value"
        for i, f in filters
        if f.operation in ("LIKE", "NOT_LIKE") and isinstance(f.value, KeyRef)
    ]
    return PatternFields(tuple(regex), tuple(like))


def json_keys(fields: QueryFields) -> list[str]:
    """The JSON paths a run of ``fields`` reads, for ``StoredTypes`` (system fields left out)."""
    keys = [f.key for f in fields.filters or []]
    keys += [f.value.key for f in fields.filters or [] if isinstance(f.value, KeyRef)]
    keys += [c.key for c in fields.calculations or [] if c.key]
    keys += [g.key for g in fields.group_bys or []]
    return sorted({k for k in keys if k not in SYSTEM_FIELDS})


def presence_keys(fields: QueryFields) -> list[str]:
    """The JSON paths whose presence a run of ``fields`` tests (EXISTS, DOES_NOT_EXIST, the
    negated operations, COUNT with a key): for ``StoredTypes.below``, the paths under them."""
    keys = [
        f.key
        for f in fields.filters or []
        if f.operation in OPERATORS
        and (OPERATORS[f.operation].presence or OPERATORS[f.operation].negates)
    ]
    keys += [c.key for c in fields.calculations or [] if c.operator == "COUNT" and c.key]
    return sorted({k for k in keys if k not in SYSTEM_FIELDS})
