"""A trace search body is refused with every bad field named."""

from __future__ import annotations

from typing import Any

import pytest

from limelight.errors import BadRequest
from limelight.query.traces import validate_search, window_starts

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


def test_the_latest_traces_are_looked_for_in_ever_wider_windows_ending_on_the_timeframe() -> None:
    hour = {"from": 1_795_000_000_000, "to": 1_795_003_600_000}
    to = hour["to"]
    assert window_starts(validate_search(hour)) == [to - 60_000, to - 480_000, hour["from"]]
    week = {"from": to - 7 * 86_400_000, "to": to}
    starts = window_starts(validate_search(week))
    assert starts[0] == to - 7 * 86_400_000 // 4096 and starts[-1] == week["from"]
    assert [to - s for s in starts[:-1]] == [(to - starts[0]) * 8**i for i in range(5)]
    # The slowest traces may be anywhere: one step over the whole timeframe.
    assert window_starts(validate_search({**week, "orderBy": "duration"})) == [week["from"]]
