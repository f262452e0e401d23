"""System fields: the event time, and the service and namespace an event is filed under."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from limelight.ingest.enrich import event_time_ms, header_name, pick_name

RECEIVED = 1_763_700_000_000  # 2025-11-21T04:40:00Z, a fixed "now"
AT = 1_763_690_000_123  # an event time a little earlier


@pytest.mark.parametrize(
    "value",
    [
        AT / 1000,  # seconds with a fraction
        AT,  # milliseconds
        AT * 1000,  # microseconds
        AT * 1_000_000,  # nanoseconds
        str(AT),
        str(AT / 1000),
        "2025-11-21T01:53:20.123Z",
        "2025-11-21T02:53:20.123+01:00",
        "2025-11-21T01:53:20.123",  # no zone: UTC
        "2025-11-21 01:53:20.123",
    ],
)
def test_epochs_of_any_unit_and_iso_8601_give_the_same_instant(value: Any) -> None:
    assert event_time_ms({"timestamp": value}, RECEIVED) == AT


def test_whole_seconds_are_read_as_seconds() -> None:
    assert event_time_ms({"timestamp": AT // 1000}, RECEIVED) == AT // 1000 * 1000


@pytest.mark.parametrize("field", ["timestamp", "_timestamp", "@timestamp", "time"])
def test_every_time_field_is_read(field: str) -> None:
    assert event_time_ms({field: AT}, RECEIVED) == AT


def test_time_fields_are_tried_in_order_and_a_bad_one_is_skipped() -> None:
    event = {"time": AT - 5, "@timestamp": "not a time", "timestamp": AT}
    assert event_time_ms(event, RECEIVED) == AT
    assert event_time_ms({"time": AT - 5, "@timestamp": "nope"}, RECEIVED) == AT - 5


@pytest.mark.parametrize(
    "value",
    [
        "1999-12-31T23:59:59Z",  # before the sane window
        datetime(2025, 11, 23, tzinfo=UTC).isoformat(),  # more than a day ahead
        0,
        -1,
        10**30,
        True,
        None,
        "",
        "yesterday",
        {"ms": AT},
        [AT],
        # Digits str.isdigit() takes and float() refuses, and digits of other scripts.
        "\u00b2",  # superscript two
        "\u00b3",
        "\u2460",  # circled one
        "-\u00b2.\u00b3",
        "\u0661\u0667\u0666\u0663\u0666\u0669\u0660\u0660\u0660\u0660",  # Arabic-Indic
        10**400,  # beyond any float (an integer kept exact by the parser)
        -(10**400),
        "1" * 400,
    ],
)
def test_times_outside_the_window_or_unreadable_fall_back_to_receive_time(value: Any) -> None:
    assert event_time_ms({"timestamp": value}, RECEIVED) == RECEIVED


def test_no_time_field_gives_receive_time() -> None:
    assert event_time_ms({"message": "hi"}, RECEIVED) == RECEIVED


def test_a_little_clock_skew_into_the_future_is_kept() -> None:
    ahead = RECEIVED + 3_600_000
    assert event_time_ms({"timestamp": ahead}, RECEIVED) == ahead


@pytest.mark.parametrize(
    ("header", "event", "expected"),
    [
        ("api", {"service": "worker"}, "api"),  # the header wins
        (None, {"service": "worker"}, "worker"),
        (None, {}, "default"),
        ("undefined", {"service": "worker"}, "worker"),  # JS clients send the literal
        ("undefined", {}, "default"),
        ("null", {}, "default"),
        ("  ", {"service": "worker"}, "worker"),
        (None, {"service": "undefined"}, "default"),
        (None, {"service": 42}, "default"),
        (None, {"service": ""}, "default"),
        ("team/api/v2", {}, "team/api/v2"),  # slashes are kept as sent
        (None, {"service": "a/b"}, "a/b"),
        (" api ", {}, "api"),
    ],
)
def test_service_choice(header: str | None, event: dict[str, Any], expected: str) -> None:
    assert pick_name(header_name(header), event, "service") == expected


def test_namespace_is_chosen_the_same_way_from_its_own_field() -> None:
    event = {"service": "svc", "namespace": "checkout/v2"}
    assert pick_name(header_name(None), event, "namespace") == "checkout/v2"
    assert pick_name(header_name("undefined"), event, "namespace") == "checkout/v2"
    assert pick_name(header_name("ns/x"), event, "namespace") == "ns/x"
