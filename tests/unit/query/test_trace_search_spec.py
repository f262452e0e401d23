"""A trace search body is refused with every bad field named."""

from __future__ import annotations

from typing import Any

import pytest

from limelight.errors import BadRequest
from limelight.query.traces import validate_search

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
