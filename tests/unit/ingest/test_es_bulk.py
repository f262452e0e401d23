"""Elasticsearch bulk bodies to documents: actions, index names, refusals in their place."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from limelight.errors import BadRequest
from limelight.ingest.documents import Document, Refusal
from limelight.ingest.es_bulk import dataset_for_index, parse_bulk
from tests.unit.ingest.limits import limits


def ndjson(*lines: Any, end: bytes = b"\n") -> bytes:
    return b"".join(orjson.dumps(line) + end for line in lines)


@pytest.mark.parametrize(
    ("index", "dataset"),
    [
        ("logs", "logs"),
        ("filebeat-8.17.0", "filebeat-8.17.0"),
        ("logstash-2026.11.27", "logstash-2026.11.27"),
        ("remote:logs", "remote_logs"),
        ("<logs-{now/d}>", "_logs-_now_d__"),
        ("événements", "_v_nements"),
        ("x" * 300, "x" * 128),
        (".", None),
        ("..", None),
        ("", None),
    ],
)
def test_index_names_become_dataset_names(index: str, dataset: str | None) -> None:
    assert dataset_for_index(index) == dataset


def test_index_and_create_store_update_and_delete_are_refused_in_their_place() -> None:
    body = ndjson(
        {"index": {"_index": "a", "_type": "_doc", "_id": "1"}}, {"n": 1},
        {"update": {"_index": "a", "_id": "1"}}, {"doc": {"n": 2}},
        {"delete": {"_index": "a", "_id": "1"}},
        {"create": {}}, {"n": 3},
        end=b"\r\n",
    )  # fmt: skip
    items = parse_bulk(body, "from-path", limits())
    assert [(i.action, i.index, i.id) for i in items] == [
        ("index", "a", "1"), ("update", "a", "1"), ("delete", "a", "1"),
        ("create", "from-path", None),
    ]  # fmt: skip
    first, update, delete, last = (i.item for i in items)
    assert isinstance(first, Document) and first.event == {"n": 1} and first.dataset == "a"
    assert isinstance(last, Document) and last.dataset == "from-path"
    assert isinstance(update, Refusal) and update.kind == "unsupported_action"
    assert isinstance(delete, Refusal) and delete.kind == "unsupported_action"


def test_a_numeric_index_or_id_is_read_as_its_text_as_elasticsearch_reads_it() -> None:
    body = ndjson(
        {"index": {"_index": 2024, "_id": 7}}, {"n": 1}, {"index": {"_index": True}}, {"n": 2}
    )
    first, second = parse_bulk(body, None, limits())
    assert (first.index, first.id) == ("2024", "7")
    assert isinstance(first.item, Document) and first.item.dataset == "2024"
    assert isinstance(second.item, Refusal) and second.item.reason == "index is missing"


def test_documents_that_cannot_be_events_are_refused_alone() -> None:
    body = ndjson({"index": {}}, [1], {"index": {}}) + b"{nope\n" + ndjson({"index": {}}, {"ok": 1})
    body += b'{"index": {}}\n' + b"[" * 1100 + b"]" * 1100 + b"\n"
    kinds = [
        i.item.kind if isinstance(i.item, Refusal) else "stored"
        for i in parse_bulk(body, "logs", limits())
    ]
    assert kinds == ["not_an_object", "invalid", "stored", "too_deep"]


def test_big_integers_stay_exact() -> None:
    (item,) = parse_bulk(
        ndjson({"index": {}}) + b'{"n": 123456789012345678901234}\n', "x", limits()
    )
    assert isinstance(item.item, Document)
    assert item.item.event == {"n": 123456789012345678901234} and item.item.exact


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"\n \n",
        b"[]\n",
        b'{"index": {}}\n',  # no document line
        b'{"index": 1}\n{}\n',
        b'{"index": {}, "delete": {}}\n{}\n',
        b'{"search": {}}\n',
    ],
)
def test_bodies_that_are_not_bulk_are_refused_whole(body: bytes) -> None:
    with pytest.raises(BadRequest):
        parse_bulk(body, "logs", limits())


def test_more_actions_than_a_request_may_hold_are_refused() -> None:
    body = ndjson({"delete": {"_id": "x"}}) * 11
    with pytest.raises(BadRequest, match="more than 10 actions"):
        parse_bulk(body, "logs", limits(max_events=10))
