"""A query as the console's forms and addresses hold it: read, validated, written back."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

import pytest

from limelight.console.query_form import fields_from_params, params_from_fields, parse_value
from limelight.query.spec import fields_to_json, validate_fields

FULL = {
    "namespaces": [{"type": "dataset", "value": "logs"}, {"type": "service", "value": "api"}],
    "calculations": [
        {"operator": "P99", "key": "duration", "alias": "p99"},
        {"operator": "COUNT"},
    ],
    "filters": [
        {"key": "http.status", "operation": ">=", "value": 500},
        {"key": "code", "operation": "=", "value": "500"},
        {"key": "ok", "operation": "=", "value": True},
        {"key": "route", "operation": "IN", "value": "/a, /b"},
        {"key": "region", "operation": "IN", "value": ["eu", "us"]},
        {"key": "error", "operation": "EXISTS"},
        {"key": "latency", "operation": ">", "value": {"key": "budget", "type": "number"}},
    ],
    "filter_combination": "OR",
    "group_bys": [{"key": "_service"}],
    "orders": [{"key": "p99", "order": "ASCENDING"}],
    "needle": {"value": "timeout", "isRegex": True, "matchCase": False},
    "limit": 20,
}


def test_a_query_survives_the_address_and_back() -> None:
    expected = fields_to_json(validate_fields(FULL))
    address = urlencode(params_from_fields(expected))
    assert (
        fields_to_json(
            validate_fields(fields_from_params(parse_qsl(address, keep_blank_values=True)))
        )
        == expected
    )


@pytest.mark.parametrize(
    ("text", "operation", "value"),
    [
        ("500", "=", 500),
        ("2.5", ">", 2.5),
        ('"500"', "=", "500"),
        ("true", "=", True),
        ("timeout", "=", "timeout"),
        ("null", "=", "null"),  # JSON null is no value: the text
        ("a, b", "IN", "a, b"),
        ('["a", 1]', "NOT_IN", ["a", 1]),
        ("anything", "EXISTS", None),
    ],
)
def test_a_filter_value_is_json_when_it_reads_as_json_else_text(
    text: str, operation: str, value: object
) -> None:
    assert parse_value(text, operation) == value


def test_rows_left_empty_say_nothing() -> None:
    pairs = [
        ("nt", "dataset"), ("nv", ""),
        ("co", ""), ("ck", ""), ("ca", ""),
        ("co", "COUNT"), ("ck", ""), ("ca", ""),
        ("fk", ""), ("fo", "="), ("fv", ""),
        ("g", " "), ("ok", ""), ("od", "DESCENDING"), ("q", ""),
    ]  # fmt: skip
    assert fields_from_params(pairs) == {"calculations": [{"operator": "COUNT"}]}
