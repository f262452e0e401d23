"""Loki push requests to documents: labels, lines, times, datasets, services."""

from __future__ import annotations

import orjson
import pytest

from limelight.errors import BadRequest
from limelight.ingest.documents import Document, Refusal
from limelight.ingest.loki import streams_documents
from limelight.ingest.loki_wire import decode_json, parse_labels
from tests.unit.ingest.limits import limits


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        ('{app="api"}', {"app": "api"}),
        ('{ app = "a,b}" , env="prod" }', {"app": "a,b}", "env": "prod"}),
        (r'{msg="say \"hi\"\n", path="C:\\x"}', {"msg": 'say "hi"\n', "path": "C:\\x"}),
        ("{}", {}),
    ],
)
def test_label_selectors_are_read(text: str, labels: dict[str, str]) -> None:
    assert parse_labels(text) == labels


@pytest.mark.parametrize(
    "text", ["", "app=x", '{app="x"', "{app=x}", '{app="x",}', '{app="x"} extra', '{1a="x"}']
)
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(BadRequest, match="selector"):
        parse_labels(text)


# Go quotes a label value as strconv.Quote does, and Loki reads it back with Go's own
# unquoting: these are the escapes a Go client writes and what they stand for.
@pytest.mark.parametrize(
    ("value", "read"),
    [
        (r"\u00e9\x41", "\u00e9A"),
        (r"\U0001f600", "\U0001f600"),
        (r"\a\b\f\v\t\n\r", "\x07\x08\x0c\x0b\t\n\r"),
        (r"\xc3\xa9", "\u00e9"),  # bytes of one UTF-8 character
        (r"\101\303\251", "A\u00e9"),  # octal bytes
        (r"\x00", "\x00"),
        (r"\xff", "\ufffd"),  # not UTF-8: the replacement character, as JSON must hold text
        (r"caf\u00e9 \\ \"", 'caf\u00e9 \\ "'),
    ],
)
def test_label_values_are_unquoted_as_go_quotes_them(value: str, read: str) -> None:
    assert parse_labels(f'{{a="{value}", b="x"}}') == {"a": read, "b": "x"}


@pytest.mark.parametrize("value", [r"\q", r"\x4", r"\u00e", r"\8", r"\'", r"\U00110000"])
def test_an_escape_go_would_not_read_is_refused(value: str) -> None:
    with pytest.raises(BadRequest, match="escape"):
        parse_labels(f'{{a="{value}"}}')


def documents(body: object, dataset: str | None = None) -> list[Document | Refusal]:
    return streams_documents(decode_json(orjson.dumps(body)), dataset, limits())


def test_each_line_is_an_event_with_labels_metadata_time_and_service() -> None:
    values = [["1764244800123456789", "plain", {"k": "v"}],
              ["1764244800000000000", '{"n": 1, "job": "own"}']]  # fmt: skip
    body = {
        "streams": [{"stream": {"job": "j", "service": "s", "dataset": "d1"}, "values": values}]
    }
    first, second = documents(body)
    assert isinstance(first, Document) and isinstance(second, Document)
    assert first.event == {
        "job": "j",
        "service": "s",
        "dataset": "d1",
        "k": "v",
        "message": "plain",
    }
    assert (first.dataset, first.time_ms, first.service) == ("d1", 1764244800123, "s")
    # The line's own fields win over the labels of the same name.
    assert second.event == {"job": "own", "service": "s", "dataset": "d1", "n": 1}


def test_the_header_names_the_dataset_before_the_label_and_logs_is_the_default() -> None:
    body = {"streams": [{"stream": {"dataset": "d1"}, "values": [["1", "a"]]},
                        {"stream": {}, "values": [["1", "b"]]},
                        {"stream": {"dataset": "no way"}, "values": [["1", "c"]]}]}  # fmt: skip
    assert [d.dataset for d in documents(body, "hdr") if isinstance(d, Document)] == ["hdr"] * 3
    found = documents(body)
    assert [d.dataset if isinstance(d, Document) else d.kind for d in found] == [
        "d1", "logs", "invalid"
    ]  # fmt: skip


def test_the_legacy_form_is_read() -> None:
    entries = [{"ts": "2026-11-27T12:00:00.123456789Z", "line": "old"}]
    body = {"streams": [{"labels": '{job="x"}', "entries": entries}]}
    (doc,) = documents(body)
    assert isinstance(doc, Document)
    assert doc.event == {"job": "x", "message": "old"} and doc.time_ms == 1795780800123


def test_more_entries_than_a_request_may_hold_are_refused() -> None:
    body = {"streams": [{"stream": {}, "values": [["1", "x"]] * 11}]}
    with pytest.raises(BadRequest, match="more than 10 entries"):
        streams_documents(decode_json(orjson.dumps(body)), None, limits(max_events=10))


@pytest.mark.parametrize("digits", [40, 5000])
def test_a_time_of_more_digits_than_any_time_has_is_out_of_range_however_long(
    digits: int,
) -> None:
    """Five thousand digits answered 500: Python refuses to convert more than 4,300."""
    body = {"streams": [{"stream": {}, "values": [["9" * digits, "a"], ["1", "b"]]}]}
    found = documents(body)
    assert len(found) == 2 and isinstance(found[1], Document)
    assert found[0] == documents({"streams": [{"stream": {}, "values": [["9" * 40, "a"]]}]})[0]
