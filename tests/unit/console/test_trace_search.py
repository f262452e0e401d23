"""The Traces page's form as a trace search, and its address."""

from __future__ import annotations

import pytest

from limelight.console.render import duration_text, number_text, rate_text
from limelight.console.timeframe import Window
from limelight.console.trace_search import TraceForm, traces_address
from limelight.errors import BadRequest
from limelight.times import Timeframe

WINDOW = Window(Timeframe(1_000, 2_000))


def test_the_form_becomes_the_search_the_api_takes() -> None:
    form = TraceForm.of(
        [
            ("services", " checkout, search ,"),
            ("name", "POST /pay"),
            ("status", "error"),
            ("min", "12.5"),
            ("orderBy", "duration"),
            ("fk", "http.status"),
            ("fo", ">="),
            ("fv", "500"),
            ("fk", ""),  # an empty row says nothing
            ("fo", "="),
            ("fv", ""),
        ]
    )
    search = form.search(WINDOW)
    assert search.dataset == "otel" and search.timeframe.from_ms == 1_000
    assert search.services == ["checkout", "search"]
    assert (search.name, search.status, search.minDuration) == ("POST /pay", "error", 12.5)
    assert search.orderBy == "duration" and search.limit == 100
    assert [(f.key, f.operation, f.value) for f in search.filters or []] == [
        ("http.status", ">=", 500)
    ]


def test_a_bad_field_is_named_as_the_api_names_it() -> None:
    for pairs, field in [
        ([("min", "soon")], "minDuration"),
        ([("max", "-1")], "maxDuration"),
        ([("status", "fine")], "status"),
        ([("orderBy", "name")], "orderBy"),
        ([("fk", "a"), ("fo", "~"), ("fv", "1")], "filters[0].operation"),
    ]:
        with pytest.raises(BadRequest) as caught:
            TraceForm.of(pairs).search(WINDOW)
        assert [e["field"] for e in caught.value.errors or []] == [field], pairs


def test_the_address_keeps_the_search_and_changes_the_order_alone() -> None:
    form = TraceForm.of(
        [("ds", "spans"), ("services", "api"), ("fk", "a"), ("fo", "="), ("fv", "1")]
    )
    assert form.params(Window(Timeframe(0, 10), "1h"), orderBy="duration") == [
        ("ds", "spans"),
        ("services", "api"),
        ("orderBy", "duration"),
        ("range", "1h"),
        ("fk", "a"),
        ("fo", "="),
        ("fv", "1"),
    ]
    # The default order is left out of the address.
    assert ("orderBy", "start") not in form.params(Window(Timeframe(0, 10), "1h"), orderBy="start")


def test_a_link_to_the_traces_of_an_error_quotes_a_message_that_reads_as_json() -> None:
    pairs = traces_address(
        Window(Timeframe(5, 9)),
        dataset="otel",
        service="api",
        status="error",
        filters=[("error", "=", "404")],
    )
    assert pairs == [
        ("ds", "otel"),
        ("services", "api"),
        ("status", "error"),
        ("from", "5"),
        ("to", "9"),
        ("fk", "error"),
        ("fo", "="),
        ("fv", '"404"'),
    ]
    [flt] = TraceForm.of(pairs).search(Window(Timeframe(5, 9))).filters or []
    assert flt.value == "404"


def test_numbers_read_as_the_charts_write_them() -> None:
    assert [number_text(v) for v in (None, float("nan"), 0, 1234567, 100.0, 41.25, 0.1234)] == [
        "—",
        "—",
        "0",
        "1,234,567",
        "100",
        "41.25",
        "0.123",
    ]
    assert number_text(0.00012) == "1.200e-4" and number_text(2e15) == "2,000,000,000,000,000"
    assert duration_text(12.5) == "12.5 ms" and duration_text(None) == "—"
    assert rate_text(0.005964) == "0.596%" and rate_text(1.0) == "100%"
