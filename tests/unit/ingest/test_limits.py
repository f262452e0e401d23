"""What one request may cost: events, the echoed invalid list, memory, OTLP expansion."""

from __future__ import annotations

import tracemalloc

import orjson
import pytest

from limelight.errors import BadRequest, PayloadTooLarge
from limelight.ingest.batch import parse_batch
from limelight.ingest.otlp.codec import Encoding
from limelight.ingest.otlp.service import otlp_rows
from limelight.ingest.otlp.signals import TRACES
from limelight.ingest.service import Origin
from limelight.tenant import Tenant
from tests.unit.ingest.limits import limits
from tests.unit.ingest.otlp_builders import span, traces


def test_more_events_than_allowed_is_a_bad_request() -> None:
    body = orjson.dumps([{"n": i} for i in range(11)])
    assert len(parse_batch(body, limits(max_events=11)).valid) == 11
    with pytest.raises(BadRequest) as caught:
        parse_batch(body, limits(max_events=10))
    assert "at most 10" in str(caught.value.reason)


def test_the_invalid_list_names_the_first_elements_and_counts_all() -> None:
    body = orjson.dumps([{"ok": True}, *range(50)])
    batch = parse_batch(body, limits(max_invalid_listed=5))
    assert [e["index"] for e in batch.invalid] == [1, 2, 3, 4, 5]
    assert batch.invalid_count == 50
    assert len(batch.valid) == 1


def test_many_tiny_events_cost_memory_in_proportion_to_their_size() -> None:
    body = b"[" + b",".join([b"{}"] * 50_000) + b"]"  # 100kB
    tracemalloc.start()
    try:
        batch = parse_batch(body, limits())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(batch.valid) == 50_000
    # Python objects for 50,000 events take a few MB; oversized JSON buffers
    # (4kB each) would take 200MB.
    assert peak < 40 * 1024 * 1024


def test_otlp_requests_may_not_expand_without_bound() -> None:
    big_resource = {"service.name": "api", "blob": "x" * 10_000}
    body = traces([span(f"s{i}") for i in range(50)], big_resource).SerializeToString()
    origin = Origin(Tenant("ws", "env"), "otel")
    rows, _ = otlp_rows(TRACES, origin, body, Encoding.PROTOBUF, limits())
    assert len(rows) == 50
    with pytest.raises(PayloadTooLarge):
        otlp_rows(TRACES, origin, body, Encoding.PROTOBUF, limits(max_stored_bytes=100_000))
