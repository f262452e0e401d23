"""The Traces page's search as its form and address hold it, and as a trace search.

Pure. The address names the dataset (``ds``), the services (``services``,
comma-separated), a span name (``name``), a status (``status``: ``error`` or
``ok``), the whole trace's duration in ms (``min``, ``max``), the explorer's
filter rows (``fk``, ``fo``, ``fv``), the order (``orderBy``: ``start`` or
``duration``), the page (``page``) and the timeframe. What it asks for becomes the body
``POST /v1/traces/search`` would take, validated by the same code, so a bad
field is named as the API names it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from limelight.console.numbers import ascii_whole
from limelight.console.query_form import FormRows, fields_from_params, format_value
from limelight.console.timeframe import Window
from limelight.query.traces import MAX_TRACES, TraceSearch, validate_search

DEFAULT_DATASET = "otel"
# Traces a page lists (the trace search allows 1,000): as many as a scatter and a table
# show legibly (HyperDX lists 200 rows a page).
PAGE_TRACES = 100
# Pages of them: page N is the search's first N * 100 traces, less the pages before, as
# far as the search goes (MAX_TRACES). Paging by the last trace's start or duration (an
# earlier version) listed the same page again when more than a page shared one, and lost
# a trace whose matching span came after the last one's start.
MAX_PAGES = MAX_TRACES // PAGE_TRACES
ORDERS = {"start": "Newest first", "duration": "Slowest first"}
# The address's parameters of a search, besides the timeframe.
SEARCH_PARAMS = (
    "ds", "services", "name", "status", "min", "max", "fk", "fo", "fv", "orderBy", "page"
)  # fmt: skip
FILTER_PARAMS = ("fk", "fo", "fv")


def _number(text: str) -> float | str:
    """A duration typed in the form; text that is no number goes on to be named."""
    try:
        return float(text)
    except ValueError:
        return text


@dataclass(frozen=True)
class TraceForm:
    dataset: str
    services: str
    name: str
    status: str
    min_duration: str
    max_duration: str
    order: str
    filters: list[tuple[str, str]]  # the filter rows, as the address holds them
    page: int = 1

    @classmethod
    def of(cls, pairs: Sequence[tuple[str, str]]) -> TraceForm:
        single = dict(pairs)
        order = single.get("orderBy", "start")
        return cls(
            dataset=single.get("ds", "").strip() or DEFAULT_DATASET,
            services=single.get("services", "").strip(),
            name=single.get("name", "").strip(),
            status=single.get("status", "").strip(),
            min_duration=single.get("min", "").strip(),
            max_duration=single.get("max", "").strip(),
            order=order,
            filters=[(k, v) for k, v in pairs if k in FILTER_PARAMS],
            page=min(max(ascii_whole(single.get("page", ""), 2) or 1, 1), MAX_PAGES),
        )

    @property
    def rows(self) -> FormRows:
        return FormRows.of(self.filters)

    @property
    def service_list(self) -> list[str]:
        return [s.strip() for s in self.services.split(",") if s.strip()]

    def body(self, window: Window, limit: int = PAGE_TRACES) -> dict[str, Any]:
        """The search as ``POST /v1/traces/search`` takes it."""
        body: dict[str, Any] = {
            "dataset": self.dataset,
            "from": window.from_ms,
            "to": window.to_ms,
            "orderBy": self.order,
            "limit": limit,
        }
        if self.service_list:
            body["services"] = self.service_list
        if self.name:
            body["name"] = self.name
        if self.status:
            body["status"] = self.status
        if self.min_duration:
            body["minDuration"] = _number(self.min_duration)
        if self.max_duration:
            body["maxDuration"] = _number(self.max_duration)
        if filters := fields_from_params(self.filters).get("filters"):
            body["filters"] = filters
        return body

    @property
    def skipped(self) -> int:
        """The traces of the pages before this one."""
        return (self.page - 1) * PAGE_TRACES

    def search(self, window: Window) -> TraceSearch:
        """The trace search, to the end of this page; ``BadRequest`` naming each field at
        fault."""
        return validate_search(self.body(window, PAGE_TRACES * self.page))

    def page_address(self, window: Window, page: int) -> list[tuple[str, str]]:
        """Another page of this search, over the very timeframe of this one (a preset's
        moves on with the clock, and the pages would not follow on)."""
        return self.params(Window(window.timeframe), page=str(page))

    def params(self, window: Window, **change: str) -> list[tuple[str, str]]:
        """This search's address, with ``change`` (orderBy) applied."""
        single = {
            "ds": self.dataset,
            "services": self.services,
            "name": self.name,
            "status": self.status,
            "min": self.min_duration,
            "max": self.max_duration,
            "orderBy": self.order,
        }
        single.update(change)  # a page only when asked: another order starts at the first
        out = [
            (k, v)
            for k, v in single.items()
            if v and not (k == "orderBy" and v == "start") and not (k == "page" and v == "1")
        ]
        return out + window.params() + self.filters


def traces_address(
    window: Window,
    *,
    dataset: str,
    service: str | None = None,
    name: str | None = None,
    status: str | None = None,
    order: str | None = None,
    filters: Sequence[tuple[str, str, Any]] = (),
) -> list[tuple[str, str]]:
    """The address (parameters) of a Traces page search other pages link to: a service's
    (or one of its operations') slowest traces, the traces that failed with one error."""
    pairs = [("ds", dataset)]
    if service is not None:
        pairs.append(("services", service))
    if name is not None:
        pairs.append(("name", name))
    if status is not None:
        pairs.append(("status", status))
    if order is not None:
        pairs.append(("orderBy", order))
    pairs += window.params()
    for key, operation, value in filters:
        pairs += [("fk", key), ("fo", operation), ("fv", format_value(value))]
    return pairs
