"""Elasticsearch's filter_path as Filebeat and Logstash use it, and the set-up answers."""

from __future__ import annotations

from typing import Any

import pytest

from limelight.api.es_answers import filter_path

ANSWER: dict[str, Any] = {
    "took": 3,
    "errors": True,
    "items": [
        {"create": {"_index": "a", "_id": "1", "status": 201, "result": "created"}},
        {"index": {"_index": "a", "_id": None, "status": 400,
                   "error": {"type": "t", "reason": "r"}}},
    ],
}  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            "errors,items.*.error,items.*.status",
            {"errors": True, "items": [{"create": {"status": 201}},
             {"index": {"status": 400, "error": {"type": "t", "reason": "r"}}}]},
        ),
        ("took", {"took": 3}),
        ("items.*.error", {"items": [{"index": {"error": {"type": "t", "reason": "r"}}}]}),
        ("**.reason", {"items": [{"index": {"error": {"reason": "r"}}}]}),
        ("items.cr*._id", {"items": [{"create": {"_id": "1"}}]}),
        ("nothing", {}),
        ("-items,-took", {"errors": True}),
    ],
)  # fmt: skip
def test_filter_path_keeps_what_it_names(spec: str, expected: Any) -> None:
    assert filter_path(ANSWER, spec) == expected
