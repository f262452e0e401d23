"""An event's trace link is made only from a real trace id."""

from __future__ import annotations

import pytest

from limelight.console.event_lines import event_line, trace_id_of
from limelight.console.render import utc_text

TRACE = "0123456789abcdef0123456789ABCDEF"


@pytest.mark.parametrize(
    "sent",
    [
        "../../../../../../../login?next=",
        "../../../env/1m859hy9h8b6ww1m3p6",
        "0123456789abcdef0123456789abcdeg",
        "0123456789abcdef0123456789abcde",
        12345678901234567890123456789012,
    ],
)
def test_anything_but_32_hex_digits_is_no_trace_id(sent: object) -> None:
    event = {
        "traceId": sent,
        "_timestamp": 1,
        "_id": "e",
        "_dataset": "d",
        "_service": "s",
        "message": "m",
    }
    assert trace_id_of(event) is None
    assert event_line("/env/x", event, []).trace is None


def test_a_trace_id_links_to_its_trace_page() -> None:
    event = {"traceId": TRACE, "_timestamp": 7, "_id": "e", "_dataset": "d", "_service": "s"}
    line = event_line("/env/x", event, [])
    assert line.trace == f"/env/x/traces/{TRACE.lower()}?t=7"


def test_a_time_no_calendar_can_show_is_shown_as_nothing() -> None:
    assert utc_text(10**20) == ""
    assert utc_text(0) == "1970-01-01 00:00:00 UTC"
