"""A trace's spans as a waterfall: nesting, order, placement, and broken traces."""

from __future__ import annotations

from typing import Any

from limelight.console.waterfall import SpanException, waterfall

START_NS = 1_795_000_000_000_000_000
MS = 1_000_000


def span(
    span_id: str, parent: str | None, start_ms: float, duration: float, **extra: Any
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "traceId": "ab" * 16,
        "spanId": span_id * 16,
        "name": f"span {span_id}",
        "timestamp": START_NS + int(start_ms * MS),
        "duration": duration,
        "_timestamp": START_NS // MS + int(start_ms),
        "_service": "api",
        "kind": "SERVER",
        **extra,
    }
    if parent:
        event["parentSpanId"] = parent * 16
    return event


def test_children_follow_their_parent_by_start_and_are_placed_on_the_time_line() -> None:
    events = [
        span("c", "a", 50, 50),
        span("b", "a", 10, 20),
        span("a", None, 0, 100),
        span("d", "b", 15, 5, status={"code": "ERROR"}, attributes={"db": {"system": "pg"}}),
        {"traceId": "ab" * 16, "message": "a log line of the trace", "_timestamp": 1},
    ]
    found = waterfall(events)
    assert found is not None
    rows = [(r.span_id[0], r.depth, r.offset_percent, r.width_percent) for r in found.rows]
    assert rows == [
        ("a", 0, 0.0, 100.0),
        ("b", 1, 10.0, 20.0),
        ("d", 2, 15.0, 5.0),
        ("c", 1, 50.0, 50.0),
    ]
    assert found.total_ms == 100.0
    d = found.rows[2]
    assert d.status == "ERROR" and d.attributes == [("db.system", "pg")]


def test_a_span_whose_parent_is_missing_is_a_marked_root() -> None:
    found = waterfall([span("a", None, 0, 10), span("b", "z", 2, 3)])
    assert found is not None
    assert [(r.span_id[0], r.depth, r.orphan) for r in found.rows] == [
        ("a", 0, False),
        ("b", 0, True),
    ]


def test_parents_in_a_cycle_and_deep_nesting_are_all_shown() -> None:
    cycle = [span("x", "y", 0, 1), span("y", "x", 1, 1)]
    found = waterfall(cycle)
    assert found is not None
    assert [(r.span_id[0], r.depth, r.orphan) for r in found.rows] == [
        ("x", 0, True),
        ("y", 1, False),
    ]
    ids = [f"{i:016x}" for i in range(1, 3001)]
    chain = [
        {**span("a", None, i * 0.01, 1), "spanId": sid, "parentSpanId": ids[i - 1] if i else None}
        for i, sid in enumerate(ids)
    ]
    deep = waterfall([{k: v for k, v in e.items() if v is not None} for e in chain])
    assert deep is not None and deep.rows[-1].depth == 2999


def test_no_span_no_waterfall() -> None:
    assert waterfall([{"traceId": "ab" * 16, "message": "log", "_timestamp": 1}]) is None


def test_a_span_sent_with_impossible_times_is_placed_by_its_received_time() -> None:
    sane = span("a", None, 0, 10)
    far = span("b", "a", 5, 1, timestamp=10**26)  # past the year 9999 in nanoseconds
    huge = span("c", "a", 5, 1e308)  # a duration no span has
    shown = waterfall([sane, far, huge])
    assert shown is not None
    rows = {r.span_id[0]: r for r in shown.rows}
    assert rows["b"].start_ns == far["_timestamp"] * MS
    assert rows["c"].duration_ms is None
    assert shown.total_ms == 10


def test_the_status_class_is_one_of_three_whatever_was_sent() -> None:
    sent = ["OK visually-hidden", "error", "UNSET", "Ok", "STATUS_CODE_ERROR", ""]
    events = [span(str(n), None, n, 1, status={"code": c}) for n, c in enumerate(sent)]
    shown = waterfall(events)
    assert shown is not None
    by_id = {r.span_id[0]: r for r in shown.rows}
    classes = [by_id[str(n)].status_class for n in range(len(sent))]
    assert classes == ["unset", "error", "unset", "ok", "unset", "unset"]
    assert by_id["0"].status == "OK visually-hidden"  # shown as sent, as text


def test_a_log_record_written_in_a_span_is_kept_beside_it_not_drawn_as_a_span() -> None:
    """An OpenTelemetry log record carries its span's id (and no kind): it is one of the
    span's logs, never a span of its own."""
    log = {
        "traceId": "ab" * 16,
        "spanId": "b" * 16,
        "message": "charging card",
        "_timestamp": START_NS // MS + 12,
        "_id": "log1",
        "_dataset": "app-logs",
    }
    stray = {**log, "spanId": ["not", "an", "id"], "_id": "log2", "message": "odd"}
    # Newest first, as a query run lists them: the log comes before its span.
    found = waterfall([log, stray, span("b", "a", 10, 20), span("a", None, 0, 100)])
    assert found is not None
    assert [(r.name, r.duration_ms) for r in found.rows] == [("span a", 100), ("span b", 20)]
    assert [e["_id"] for e in found.rows[1].logs] == ["log1"]
    assert found.rows[0].logs == []
    assert [e["_id"] for e in found.logs] == ["log1", "log2"]
    assert found.log_datasets == ["app-logs"]


def test_a_spans_exceptions_are_read_from_its_events_nested_or_dotted() -> None:
    stack = "\n".join(f"  at line {i}" for i in range(250))
    events = [
        {"name": "exception", "attributes": {"exception": {"type": "KeyError", "message": "k"}}},
        {"name": "retry", "attributes": {"attempt": 2}},
        {
            "name": "exception",
            "attributes": {"exception.message": "boom", "exception.stacktrace": stack},
        },
        "not an event",
    ]
    found = waterfall([span("a", None, 0, 10, events=events), span("b", "a", 1, 1, events="x")])
    assert found is not None
    first, second = found.rows[0].exceptions
    assert first == SpanException("KeyError", "k", "")
    assert (second.type, second.message) == ("", "boom")
    lines = second.stacktrace.splitlines()
    assert len(lines) == 201 and lines[-1] == "… 50 more lines"
    assert found.rows[1].exceptions == []


def test_each_service_has_the_colour_of_its_place_in_the_legend() -> None:
    found = waterfall(
        [
            span("a", None, 0, 10, _service="web"),
            span("b", "a", 1, 1, _service="db"),
            span("c", "a", 2, 1, _service="web"),
        ]
    )
    assert found is not None
    assert found.services == ["db", "web"]
    assert [(r.service, r.colour) for r in found.rows] == [("web", 1), ("db", 0), ("web", 1)]
