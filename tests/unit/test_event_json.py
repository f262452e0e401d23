"""Stored events back as JSON: the stored text with the system fields, exact."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from limelight.event_json import dumps_exact, event_json, to_event

SYSTEM = {
    "_timestamp": 1_700_000_000_000,
    "_dataset": "logs",
    "_service": "api",
    "_namespace": "default",
    "_id": "b1000001",
}


def _row(event: Any, exact: bool = False) -> dict[str, Any]:
    # Stored as the ingest stores it.
    return {"raw": dumps_exact(event, exact).decode(), **SYSTEM}


def _read(fragment: orjson.Fragment) -> Any:
    return json.loads(orjson.dumps([fragment]))[0]


@pytest.mark.parametrize(
    "event",
    [
        {"a": {"b": [1, "x", None]}, "c.d": 2.5, "ok": True},
        {},
        {"unicode": "héllo ✓ 🚀", "escapes": 'tab\t "q" \\ \n \u2028'},
        {"_other": "kept", "service": "from the event"},
    ],
)
def test_an_event_reads_back_as_sent_with_its_system_fields(event: dict[str, Any]) -> None:
    row = _row(event)
    assert _read(event_json(row)) == {**event, **SYSTEM} == to_event(row)
    # The very text of encoding the parsed event: same keys, once each, in the same order.
    assert orjson.dumps(event_json(row)) == orjson.dumps(to_event(row))


@pytest.mark.parametrize(
    "event",
    [
        {"_timestamp": "mine", "_id": 7, "n": 1},
        {"n": 1, "nested": {"_service": "inner"}, "note": '"_dataset"'},
    ],
)
def test_a_key_named_like_a_system_field_gives_way_to_it(event: dict[str, Any]) -> None:
    row = _row(event)
    assert _read(event_json(row)) == {**event, **SYSTEM}
    # Each key once (a dict's encoding), the system fields where the event had them.
    assert orjson.dumps(event_json(row)) == orjson.dumps(to_event(row))


def test_integers_beyond_64_bits_stay_exact() -> None:
    event = {"big": 2**70, "neg": -(2**63) - 5, "nested": [{"id": 123456789012345678901234567890}]}
    for row in (_row(event, exact=True), _row({**event, "_id": 1}, exact=True)):
        text = orjson.dumps({"events": [event_json(row)]})
        assert b"1180591620717411303424" in text
        assert b"123456789012345678901234567890" in text
        assert json.loads(text)["events"][0]["big"] == 2**70
