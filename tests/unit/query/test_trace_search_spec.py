"""A trace search body is refused with every bad field named."""

from __future__ import annotations

from typing import Any

import pytest

from limelight.errors import BadRequest
from limelight.query.traces import first_window, next_window, validate_search

FRAME = {"from": 1, "to": 2}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**FRAME, "services": [f"s{i}" for i in range(101)]}, "services"),
        ({**FRAME, "maxDuration": float("inf")}, "maxDuration"),
        ({**FRAME, "limit": True}, "limit"),
        ({**FRAME, "filters": [{"key": "a", "operation": "=", "value": {"key": "b.."}}]},
         "filters[0].value.key"),
        ({**FRAME, "filters": [{"key": "a", "operation": "LIKE", "value": "x\\"}]},
         "filters[0].value"),
        ({"from": 1}, "to"),
    ],
)  # fmt: skip
def test_a_bad_field_is_named(body: dict[str, Any], field: str) -> None:
    with pytest.raises(BadRequest) as refused:
        validate_search(body)
    assert [e["field"] for e in refused.value.errors or []] == [field]


def test_only_the_timeframe_is_required() -> None:
    search = validate_search(FRAME)
    assert (search.dataset, search.orderBy, search.limit) == ("otel", "start", 20)


def test_the_latest_traces_are_looked_for_in_windows_as_much_wider_as_they_promise() -> None:
    hour = validate_search({"from": 1_795_000_000_000, "to": 1_795_003_600_000})
    to = hour.to
    assert first_window(hour) == to - 60_000  # at least a minute
    assert next_window(hour, to - 60_000, 10) == to - 480_000  # at least eightfold
    assert next_window(hour, to - 60_000, 4) == to - 600_000  # 40 traces promised in ten
    # Past half the timeframe, the whole of it.
    assert next_window(hour, to - 60_000, 0) == hour.from_
    week = validate_search({"from": to - 7 * 86_400_000, "to": to})
    assert first_window(week) == to - 7 * 86_400_000 // 4096
    assert next_window(week, first_window(week), 0) == to - 64 * (7 * 86_400_000 // 4096)
    # The slowest traces may be anywhere: one step over the whole timeframe.
    slowest = validate_search({"from": week.from_, "to": to, "orderBy": "duration"})
    assert first_window(slowest) == week.from_
