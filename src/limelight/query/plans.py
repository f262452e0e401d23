"""What the compiler hands over: a typed plan per kind of run, with named statements.

An events plan (a run without calculations) holds the page's statements and
the count; a calculations plan holds the aggregates and, when paging, the
series. Result columns are named by position (``g0_0``.. for the kinds of each
group-by, ``v0``.. for calculations), so user-chosen names never reach the SQL.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from typing import ClassVar, Literal

# Re-exported: the plans hold statements, made in scope.py with the run's options.
from limelight.query.scope import CompiledQuery as CompiledQuery
from limelight.query.scope import RunOptions as RunOptions

# Re-exported: the plans hold one, and the query package names it from here.
from limelight.times import Timeframe as Timeframe


class Statement(StrEnum):
    """The statements of runs, by name: the rows of each are handed to ``results`` so."""

    RECENT = "recent"  # the page by time alone in the timeframe's last hour
    NEWEST = "newest"  # the page by time alone over the whole timeframe
    EVENTS = "events"  # the exact page, by (time, id)
    COUNT = "count"  # the number of matching events
    AGGREGATES = "aggregates"  # totals per group (and, in one pass, the series)
    SERIES = "series"  # the series per bucket, when paging needs it apart
    HEATMAP = "heatmap"  # counts per time bucket and value bucket of a HEATMAP


@dataclass(frozen=True)
class _Statements:
    def by_name(self) -> dict[Statement, CompiledQuery]:
        """The statements there are, in the order they are declared."""
        return {
            Statement(f.name): value
            for f in fields(self)
            if (value := getattr(self, f.name)) is not None
        }


@dataclass(frozen=True)
class EventsStatements(_Statements):
    recent: CompiledQuery | None
    newest: CompiledQuery | None
    events: CompiledQuery
    count: CompiledQuery


@dataclass(frozen=True)
class CalculationsStatements(_Statements):
    aggregates: CompiledQuery
    series: CompiledQuery | None = None
    heatmap: CompiledQuery | None = None


@dataclass(frozen=True)
class PatternFields:
    """The fields holding patterns the engine compiles as it runs (``filters[2].value``,
    ``needle.value``), so that a failure to compile one can name them."""

    regex: tuple[str, ...] = ()
    like: tuple[str, ...] = ()  # LIKE patterns read from another key of the event


Strategy = Literal["resampled", "grouping_sets", "paged"]


@dataclass(frozen=True)
class EventsPlan:
    """A page of events, newest first, and their count."""

    kind: ClassVar[Literal["events"]] = "events"
    statements: EventsStatements
    timeframe: Timeframe
    granularity_ms: int
    limit: int
    offset: int
    keys: tuple[str, ...] | None  # only these keys of each event; None: whole events
    # Without filters or a needle the count reads only the typed columns, which the
    # engine answers from the primary key (0.015 s at 10M events): run it beside the
    # page rather than after it.
    cheap_count: bool
    patterns: PatternFields = PatternFields()


@dataclass(frozen=True)
class CalculationsPlan:
    """Calculations per group, in total and per time bucket."""

    kind: ClassVar[Literal["calculations"]] = "calculations"
    statements: CalculationsStatements
    strategy: Strategy
    timeframe: Timeframe
    granularity_ms: int
    limit: int
    offset: int
    groups: tuple[tuple[str, int], ...]  # (group-by key, number of kind columns)
    values: tuple[str, ...]  # the values' names, in the query's order
    patterns: PatternFields = PatternFields()


Plan = EventsPlan | CalculationsPlan
