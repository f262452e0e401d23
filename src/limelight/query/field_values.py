"""The most frequent values of one key among a dataset's events (``GET /v1/datasets/<name>/
keys/<key>/values``): one statement over the newest events that hold the key, after a count.

The events are read newest first and at most ``SAMPLE_EVENTS`` of them: the
sort key (tenant, dataset, time) lets the engine read a dataset's events in time
order and stop there, so the cost is bounded whatever the timeframe holds. More
events than that and the answer is over the newest ones, and says so
(``sampled``); see ``SAMPLE_EVENTS`` for the cost. A count of the dataset's events
in the timeframe (from the sort key: 7 to 15 ms over 1M and 10M events) comes
first: when they are no more than the sample, every event is read, in no order,
which spares the engine the ordered read (``scope.READ_NEWEST``): over a timeframe
that the sample holds whole, it took 105 ms against 56 in no order (76 reading ahead).

One pass gives the top values, the number of distinct values and the number of
events holding the key: the events' values are joined out (``ARRAY JOIN``, one
row per value of an event, the first marked), grouped by value, and window
functions count the groups and the events before the LIMIT keeps the top.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from limelight.query.keys import StoredTypes
from limelight.query.plans import CompiledQuery, Timeframe
from limelight.query.scope import READ_NEWEST, Scope
from limelight.query.spec import Filter, Namespace, Needle, QueryFields
from limelight.query.sql import Params
from limelight.query.values import decode, value_sql
from limelight.query.where import Where

# The most events read for one answer. Over 10M events (bench/investigate.py: the 7M of
# the dataset `logs`), reading the newest 1M took 0.5 to 1.1 CPU-seconds a key (requestId,
# every value distinct, the most), which 2 idle cores run in 0.5 to 1.1 s by that count
# (not measured idle: a load average of 9 made it 0.9 to 2.3 s). Over 1M events, 0.14 to
# 0.54 CPU-seconds. Since the engine reads them without reading ahead (READ_NEWEST), the
# newest 1M of 10M spans take 0.14 to 0.16 s a key, and of SERVER spans alone (2M read)
# 0.35 s, in the process on 2 cores.
SAMPLE_EVENTS = 1_000_000
DEFAULT_LIMIT = 10
MAX_LIMIT = 100
COLUMNS = ("value", "n", "distinct_values", "events")
EVENTS_COLUMNS = ("events",)


@dataclass(frozen=True)
class FieldValuesPlan:
    key: str
    statement: CompiledQuery  # the values of the newest ``sample`` events
    whole: CompiledQuery  # the same in no order, for a timeframe the sample holds whole
    events: CompiledQuery  # how many events of the dataset the timeframe holds
    sample: int  # the most events read

    def read(self, events: int) -> CompiledQuery:
        """The statement for a timeframe that holds ``events`` of the dataset (``events``
        answers): the newest are picked only from more than the sample."""
        return self.whole if events <= self.sample else self.statement

    def cut(self, read: CompiledQuery, rows: list[dict[str, Any]]) -> bool:
        """Whether ``rows`` of ``whole`` may miss newer events: it read more than the
        sample (its LIMIT is one more), as when events were written after the count.
        Then the newest are read instead. A timeframe that holds the sample exactly is
        read once (it was read twice when reaching the sample counted as cut: 3.9x a
        COUNT by service over 1M spans, against 1.7x)."""
        return read is self.whole and bool(rows) and int(rows[0]["events"]) > self.sample


def compile_field_values(
    scope: Scope,
    table: str,
    dataset: str,
    key: str,
    filters: list[Filter],
    timeframe: Timeframe,
    stored: StoredTypes,
    limit: int = DEFAULT_LIMIT,
    sample: int = SAMPLE_EVENTS,
    needle: Needle | None = None,
    dictionaries: str | None = None,
) -> FieldValuesPlan:
    """``stored`` holds the types of ``key`` and of the filters' keys; ``needle`` is a
    free-text search the events must also match (the console's Events page has one);
    ``dictionaries`` the table whose text indexes a regex needle may read."""
    fields = QueryFields(
        namespaces=[Namespace(type="dataset", value=dataset)], filters=filters, needle=needle
    )
    where = Where(scope, fields, stored, dictionaries)
    items = value_sql(stored.expr(key)).items()

    def values(newest: bool) -> CompiledQuery:
        params = Params()
        cond = where.render(params, timeframe)
        # In no order, one event more than the sample tells a whole read from a cut one.
        order, most = (" ORDER BY timestamp DESC", sample) if newest else ("", sample + 1)
        inner = scope.select(
            f"{items} AS vs",
            table,
            cond,
            f" AND notEmpty(vs){order} LIMIT {params.add(most, 'UInt32')}",
        )
        grouped = scope.around(
            inner,
            "v AS value, count() AS n, countIf(i = 1) AS first",
            " ARRAY JOIN vs AS v, arrayEnumerate(vs) AS i GROUP BY value",
        )
        sql = scope.around(
            grouped,
            "value, n, count() OVER () AS distinct_values, sum(first) OVER () AS events",
            f" ORDER BY n DESC, value ASC LIMIT {params.add(limit, 'UInt32')}",
        )
        return scope.statement(sql, params, COLUMNS, READ_NEWEST if newest else ())

    params = Params()
    dataset_only = Where(scope, QueryFields(namespaces=fields.namespaces), stored)
    cond = dataset_only.render(params, timeframe)
    count = scope.select("count() AS events", table, cond, " LIMIT 1")
    events = scope.statement(count, params, EVENTS_COLUMNS)
    return FieldValuesPlan(key, values(newest=True), values(newest=False), events, sample)


def field_values_answer(
    plan: FieldValuesPlan, rows: list[dict[str, Any]], read: CompiledQuery | None = None
) -> dict[str, Any]:
    """``{key, values: [{value, count, share}], distinct, events, sampled}``: a value's
    share is that of the events holding the key (read) that hold it. Rows of ``whole``
    that were not cut hold every event: not sampled, however many."""
    events = int(rows[0]["events"]) if rows else 0
    return {
        "key": plan.key,
        "values": [
            {
                "value": decode(row["value"]),
                "count": int(row["n"]),
                "share": int(row["n"]) / events,
            }
            for row in rows
        ],
        "distinct": int(rows[0]["distinct_values"]) if rows else 0,
        "events": events,
        "sampled": read is not plan.whole and events >= plan.sample,
    }
