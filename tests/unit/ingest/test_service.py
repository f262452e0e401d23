"""From validated events to storable rows: dataset names, system fields, redaction."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from limelight.errors import BadRequest
from limelight.ingest.batch import parse_batch
from limelight.ingest.redact import REDACTED, may_hold_secrets
from limelight.ingest.service import Origin, build_rows, check_dataset
from limelight.store.events.base import EventRow
from limelight.tenant import Tenant
from tests.unit.ingest.limits import limits

TENANT = Tenant("ws1", "env1")


@pytest.mark.parametrize(
    "name", ["logs", "a", "A.b_c-9", "x" * 128, "2024.requests", "...", ".a", "a."]
)
def test_dataset_names_that_are_accepted(name: str) -> None:
    assert check_dataset(name) == name


@pytest.mark.parametrize(
    "name",
    ["", "x" * 129, "a/b", "a b", "événements", "logs?x=1", "a\nb", "a;drop", "*", ".", ".."],
)
def test_dataset_names_that_are_refused(name: str) -> None:
    with pytest.raises(BadRequest, match="dataset"):
        check_dataset(name)


def rows_for(events: list[dict[str, Any]], origin: Origin | None = None) -> list[EventRow]:
    body = json.dumps(events).encode()
    batch = parse_batch(body, limits(256 * 1024))
    origin = origin or Origin(TENANT, "logs")
    pairs = [(v.event, v.raw) for v in batch.valid]
    return build_rows(origin, pairs, may_hold_secrets(body), batch.exact)


def test_rows_carry_dataset_service_namespace_time_and_unique_ids() -> None:
    origin = Origin(TENANT, "logs", service="api", namespace="undefined")
    rows = rows_for(
        [{"timestamp": 1_763_690_000_123, "namespace": "eu"}, {"service": "ignored"}, {}] * 50,
        origin,
    )
    assert len(rows) == 150
    assert {r.dataset for r in rows} == {"logs"}
    assert {r.service for r in rows} == {"api"}
    assert [r.namespace for r in rows[:3]] == ["eu", "default", "default"]
    assert rows[0].timestamp_ms == 1_763_690_000_123
    assert len({r.id for r in rows}) == 150
    # Two batches never share an id either.
    assert not {r.id for r in rows} & {r.id for r in rows_for([{}] * 150)}


def test_raw_is_the_event_as_sent_when_nothing_is_redacted() -> None:
    event = {"http.method": "GET", "n": None, "e": {}, "a": [1, "é", {"b": 2.5}]}
    (row,) = rows_for([event])
    assert orjson.loads(row.raw) == event


def test_secrets_are_redacted_in_the_stored_text() -> None:
    event = {"user": "ann", "password": "hunter2", "req": {"headers": {"Cookie": "sid=1"}}}
    (row,) = rows_for([event])
    assert orjson.loads(row.raw) == {
        "user": "ann",
        "password": REDACTED,
        "req": {"headers": {"Cookie": REDACTED}},
    }
    assert b"hunter2" not in row.raw


def test_an_environment_can_turn_redaction_off() -> None:
    event = {"password": "hunter2"}
    (row,) = rows_for([event], Origin(TENANT, "logs", redact_secrets=False))
    assert orjson.loads(row.raw) == event


def test_redaction_keeps_big_integers_exact() -> None:
    body = f'[{{"token": "t", "id": {2**70}}}]'.encode()
    batch = parse_batch(body, limits(256 * 1024))
    (row,) = build_rows(
        Origin(TENANT, "logs"), [(v.event, v.raw) for v in batch.valid], True, batch.exact
    )
    assert json.loads(row.raw) == {"token": REDACTED, "id": 2**70}
