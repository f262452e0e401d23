"""A Splunk HEC ``/raw`` body to documents: one event a line, lines broken where Splunk
breaks them (carriage returns and line feeds) and nowhere else."""

from __future__ import annotations

import orjson
import pytest

from limelight.ingest.documents import Document, Refusal
from limelight.ingest.hec import dataset_of, raw_documents

from .limits import limits


def events(body: bytes) -> list[dict[str, object]]:
    out = []
    for doc in raw_documents(body, "logs", {"host": "h1"}, limits()):
        assert isinstance(doc, Document)
        out.append(doc.event)
    return out


def test_lines_break_at_line_feeds_and_carriage_returns() -> None:
    assert events(b'one\r\ntwo\rthree\n\n{"a": 1}\n') == [
        {"host": "h1", "message": "one"},
        {"host": "h1", "message": "two"},
        {"host": "h1", "message": "three"},
        {"a": 1, "host": "h1"},
    ]


# Python's ``str.splitlines`` also breaks at each of these; Splunk breaks only at ``\r``
# and ``\n``.
OTHER_SEPARATORS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]


@pytest.mark.parametrize("separator", OTHER_SEPARATORS)
def test_other_line_separators_stay_inside_their_line(separator: str) -> None:
    assert events(f"plain{separator}text\nnext\n".encode()) == [
        {"host": "h1", "message": f"plain{separator}text"},
        {"host": "h1", "message": "next"},
    ]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_json_line_holding_a_separator_raw_stays_one_object(separator: str) -> None:
    """JSON lets these stand unescaped inside a string, and encoders leave them so."""
    line = orjson.dumps({"msg": f"a{separator}b"}).decode()
    assert separator in line
    assert events(f"{line}\n".encode()) == [{"msg": f"a{separator}b", "host": "h1"}]


def test_an_index_that_is_not_text_is_named_by_its_kind() -> None:
    """Its repr, nested a thousand levels, passed Python's recursion limit (a 500)."""
    deep: list[object] = []
    for _ in range(1000):
        deep = [deep]
    refusal = dataset_of(deep, "logs")
    assert isinstance(refusal, Refusal)
    assert refusal.reason == "the index (an array) is not a dataset name"
    assert dataset_of("logs.app", "main") == "logs.app"
