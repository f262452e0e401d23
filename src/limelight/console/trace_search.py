"""The Traces page's search as its form and address hold it, and as a trace search.

Pure. The address names the dataset (``ds``), the services (``services``,
comma-separated), a span name (``name``), a status (``status``: ``error`` or
``ok``), the whole trace's duration in ms (``min``, ``max``), the explorer's
filter rows (``fk``, ``fo``, ``fv``), the order (``orderBy``: ``start`` or
``duration``) and the timeframe. What it asks for becomes the body
``POST /v1/traces/search`` would take, validated by the same code, so a bad
field is named as the API names it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from limelight.console.query_form import FormRows, fields_from_params, format_value
from limelight.console.timeframe import Window
from limelight.query.traces import TraceSearch, validate_search
from limelight.times import Timeframe

DEFAULT_DATASET = "otel"
# Traces a page lists (the trace search allows 1,000): as many as a scatter and a table
# show legibly (HyperDX lists 200 rows a page).
PAGE_TRACES = 100
ORDERS = {"start": "Newest first", "duration": "Slowest first"}
# The address's parameters of a search, besides the timeframe.
SEARCH_PARAMS = ("ds", "services", "name", "status", "min", "max", "fk", "fo", "fv", "orderBy")
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

    def search(self, window: Window) -> TraceSearch:
        """The trace search; ``BadRequest`` naming each field at fault."""
        return validate_search(self.body(window))

    def next_page(self, window: Window, start: int, duration: float) -> list[tuple[str, str]]:
        """The address of the page after one whose last trace started at ``start`` and
        lasted ``duration`` ms: newest first, the timeframe up to that start; slowest
        first, the traces up to that duration. The search has no offset (a page is read
        window by window, newest first), so a page goes on from where the last left off,
        and the last trace (and any of the same start or duration) is listed again rather
        than lost."""
        if self.order == "duration":
            return replace(self, max_duration=repr(duration)).params(window)
        if start + 1 <= window.from_ms:
            return self.params(window)
        return self.params(Window(Timeframe(window.from_ms, min(start + 1, window.to_ms))))

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
        single.update(change)
        out = [(k, v) for k, v in single.items() if v and not (k == "orderBy" and v == "start")]
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
