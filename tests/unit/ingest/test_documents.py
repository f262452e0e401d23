"""Documents of any shipper format to rows: checks, times, services, redaction, the
bound on the stored bytes."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from limelight.errors import PayloadTooLarge
from limelight.ingest.documents import Document, Refusal, store_documents
from limelight.ingest.redact import REDACTED
from limelight.store.events.base import EventRow
from limelight.tenant import Tenant
from tests.unit.ingest.limits import limits

TENANT = Tenant("ws1", "env1")


class Rows:
    def __init__(self) -> None:
        self.rows: list[EventRow] = []

    def insert(self, tenant: Tenant, rows: Sequence[EventRow]) -> None:
        assert tenant == TENANT
        self.rows.extend(rows)


def test_refusals_keep_their_place_and_stored_documents_get_their_ids() -> None:
    sink = Rows()
    deep: dict[str, object] = {}
    for _ in range(200):
        deep = {"a": deep}
    items = [
        Document("a", {"n": 1}),
        Refusal("unsupported_action", "no"),
        Document("a", {"big": "x" * 300}),
        Document("b", deep),
        Document("b", {"n": 2}, service="svc"),
    ]
    outcome = store_documents(sink, TENANT, True, items, limits(200))
    kinds = [r.kind if isinstance(r, Refusal) else "id" for r in outcome.results]
    assert kinds == ["id", "unsupported_action", "too_large", "too_deep", "id"]
    assert [r.id for r in sink.rows] == [outcome.results[0], outcome.results[4]]
    assert [(r.dataset, r.service) for r in sink.rows] == [("a", "default"), ("b", "svc")]
    assert outcome.accepted == 2
    assert outcome.refused == {"unsupported_action": 1, "too_large": 1, "too_deep": 1}


def test_the_formats_time_wins_when_plausible_else_the_events_own() -> None:
    sink = Rows()
    items = [
        Document("a", {"timestamp": 1_763_690_000_000}, time_ms=1_763_690_111_222),
        Document("a", {"timestamp": 1_763_690_000_000}, time_ms=5),  # 1970: not plausible
        Document("a", {}, time_ms=None),
    ]
    store_documents(sink, TENANT, True, items, limits())
    times = [r.timestamp_ms for r in sink.rows]
    assert times[:2] == [1_763_690_111_222, 1_763_690_000_000]
    assert times[2] > 1_763_690_111_222  # the receive time


def test_secrets_are_redacted_unless_the_environment_says_not() -> None:
    sink = Rows()
    store_documents(sink, TENANT, True, [Document("a", {"password": "p"})], limits())
    store_documents(sink, TENANT, False, [Document("a", {"password": "p"})], limits())
    assert [r.raw for r in sink.rows] == [
        f'{{"password":"{REDACTED}"}}'.encode(),
        b'{"password":"p"}',
    ]


def test_more_stored_bytes_than_a_request_may_make_is_refused_whole() -> None:
    sink = Rows()
    items = [Document("a", {"line": "x" * 100}) for _ in range(20)]
    with pytest.raises(PayloadTooLarge):
        store_documents(sink, TENANT, True, items, limits(max_stored_bytes=1000))
    assert sink.rows == []
