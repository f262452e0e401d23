"""Gauges read when /metrics is scraped: kept for a few seconds, and left out when their
store cannot answer rather than failing the scrape."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from limelight.metrics import Reading, Readings, exposition


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def gauges(readings: Readings) -> dict[str, float]:
    body, _ = exposition(readings)
    return {
        s.name: s.value
        for family in text_string_to_metric_families(body.decode())
        for s in family.samples
        if s.name.startswith("test_")
    }


def test_a_reading_serves_the_scrapes_of_the_next_seconds() -> None:
    sizes = iter([10, 20, 30])
    clock = Clock()
    readings = Readings([Reading("test_size_bytes", "A size.", lambda: next(sizes))], 5, clock)
    assert gauges(readings) == {"test_size_bytes": 10}
    clock.now += 4.9
    assert gauges(readings) == {"test_size_bytes": 10}
    clock.now += 0.1
    assert gauges(readings) == {"test_size_bytes": 20}


def test_a_store_that_cannot_answer_leaves_its_gauge_out_and_the_rest_in() -> None:
    def unreachable() -> int:
        raise ConnectionError("connection refused")

    readings = Readings(
        [
            Reading("test_events_bytes", "Unreachable.", unreachable),
            Reading("test_memory_bytes", "Nothing to measure.", lambda: None),
            Reading("test_metadata_bytes", "Answers.", lambda: 7),
        ],
        5,
        Clock(),
    )
    body, _ = exposition(readings)
    assert gauges(readings) == {"test_metadata_bytes": 7}
    assert b"\nlimelight_query_runs_waiting 0.0\n" in body  # the counted metrics are there
