"""Validation of query fields: every problem is a 400 naming the field and what is allowed."""

from __future__ import annotations

from typing import Any

import pytest

from limelight.errors import BadRequest
from limelight.query.operators import MAX_LIST_VALUES
from limelight.query.spec import fields_to_json, validate_fields


def errors_of(data: Any) -> dict[str, str]:
    with pytest.raises(BadRequest) as caught:
        validate_fields(data)
    assert caught.value.message == "Invalid query"
    assert caught.value.status == 400
    return {e["field"]: e["message"] for e in caught.value.errors or []}


def test_an_empty_query_is_valid_and_stores_as_empty() -> None:
    assert fields_to_json(validate_fields({})) == {}


def test_stored_form_keeps_what_was_sent() -> None:
    data = {
        "namespaces": [{"type": "lambda", "value": "fn"}],
        "calculations": [{"operator": "P99", "key": "duration", "alias": "slow"}],
        "filters": [
            {"key": "status", "operation": "IN", "value": [500, "error"]},
            {"key": "a", "operation": ">", "value": {"key": "b", "type": "number"}},
            {"key": "x", "operation": "EXISTS"},
        ],
        "filter_combination": "OR",
        "group_bys": [{"key": "service", "type": "string"}],
        "orders": [{"key": "slow", "order": "ASCENDING"}],
        "name": "slow calls",
        "description": "",
    }
    assert fields_to_json(validate_fields(data)) == data


def test_unknown_fields_are_named() -> None:
    assert errors_of({"nme": "x"}) == {"nme": "unknown field"}
    assert errors_of({"filters": [{"key": "a", "operation": "=", "value": 1, "op": 1}]}) == {
        "filters[0].op": "unknown field"
    }


def test_wrong_types_are_named() -> None:
    errors = errors_of({"name": 5, "limit": "10", "keys": {"key": "a"}})
    assert set(errors) == {"name", "limit", "keys"}


def test_body_must_be_an_object() -> None:
    assert errors_of([1]) == {"query": "must be a JSON object"}


def test_calculations_and_keys_together() -> None:
    errors = errors_of({"calculations": [{"operator": "COUNT"}], "keys": [{"key": "a"}]})
    assert "cannot be used together" in errors["calculations"]


def test_unknown_operation_lists_the_allowed_ones() -> None:
    message = errors_of({"filters": [{"key": "a", "operation": "~", "value": 1}]})[
        "filters[0].operation"
    ]
    for op in ("=", "!=", ">=", "LIKE", "NOT_LIKE", "INCLUDES", "MATCH_REGEX", "NOT_IN"):
        assert op in message


def test_unknown_calculation_lists_the_allowed_ones() -> None:
    message = errors_of({"calculations": [{"operator": "P50", "key": "d"}]})[
        "calculations[0].operator"
    ]
    assert "P001" in message and "MEDIAN" in message and "VARIANCE" in message


@pytest.mark.parametrize(
    ("flt", "says"),
    [
        ({"key": "a", "operation": ">", "value": True}, "boolean"),
        ({"key": "a", "operation": "LIKE", "value": 5}, "number"),
        ({"key": "a", "operation": "=", "value": [1, 2]}, "one value"),
        ({"key": "a", "operation": "="}, "one value"),
        ({"key": "a", "operation": "IN", "value": 5}, "array"),
        ({"key": "a", "operation": "IN", "value": []}, "array"),
        ({"key": "a", "operation": "IN", "value": " , "}, "at least one"),
    ],
)
def test_values_must_suit_the_operation(flt: dict[str, Any], says: str) -> None:
    assert says in errors_of({"filters": [flt]})["filters[0].value"]


def test_filter_value_of_another_shape() -> None:
    assert "filters[0].value" in errors_of(
        {"filters": [{"key": "a", "operation": "=", "value": {}}]}
    )


def test_exists_ignores_a_value() -> None:
    validate_fields({"filters": [{"key": "a", "operation": "EXISTS", "value": ""}]})


def test_calculation_needs_a_key_except_count() -> None:
    assert (
        "needs a key" in errors_of({"calculations": [{"operator": "SUM"}]})["calculations[0].key"]
    )
    validate_fields({"calculations": [{"operator": "COUNT"}]})


def test_value_names_must_be_unique() -> None:
    errors = errors_of(
        {
            "calculations": [
                {"operator": "MAX", "key": "d"},
                {"operator": "MIN", "key": "d", "alias": "MAX(d)"},
            ]
        }
    )
    assert "used twice" in errors["calculations[1].alias"]


def test_orders_name_a_group_or_a_calculation() -> None:
    base: dict[str, Any] = {
        "calculations": [{"operator": "COUNT"}, {"operator": "MAX", "key": "d", "alias": "m"}],
        "group_bys": [{"key": "service"}],
    }
    for key in ("COUNT", "m", "service"):
        validate_fields({**base, "orders": [{"key": key, "order": "ASCENDING"}]})
    message = errors_of({**base, "orders": [{"key": "MAX(d)", "order": "DESCENDING"}]})[
        "orders[0].key"
    ]
    assert "COUNT, m, service" in message


def test_enumerations_say_what_is_allowed() -> None:
    errors = errors_of(
        {
            "filter_combination": "XOR",
            "orders": [{"key": "a", "order": "UP"}],
            "group_bys": [{"key": "a", "type": "date"}],
        }
    )
    assert "AND, OR" in errors["filter_combination"]
    assert "ASCENDING, DESCENDING" in errors["orders[0].order"]
    assert "string, number, boolean" in errors["group_bys[0].type"]


@pytest.mark.parametrize("key", ["", ".a", "a.", "a..b"])
def test_key_names_must_be_paths(key: str) -> None:
    assert "filters[0].key" in errors_of({"filters": [{"key": key, "operation": "EXISTS"}]})


def test_limit_range_and_needle() -> None:
    assert "limit" in errors_of({"limit": 0})
    assert "needle.value" in errors_of({"needle": {"value": ""}})
    assert "needle.isRegex" in errors_of({"needle": {"value": "x", "isRegex": "yes"}})


@pytest.mark.parametrize("value", [10**400, [1, 10**400], float("inf"), float("nan")])
def test_numbers_beyond_what_the_engine_compares_are_refused(value: object) -> None:
    operation = "IN" if isinstance(value, list) else "="
    with pytest.raises(BadRequest) as caught:
        validate_fields({"filters": [{"key": "a", "operation": operation, "value": value}]})
    assert caught.value.errors
    assert all(e["field"].startswith("filters[0].value") for e in caught.value.errors)


LONE_BACKSLASH = (
    "a LIKE pattern cannot end in a lone backslash: a backslash escapes the character"
    " after it (\\%, \\_); write \\\\ for a backslash"
)


@pytest.mark.parametrize("operation", ["LIKE", "NOT_LIKE"])
@pytest.mark.parametrize("pattern", ["\\", "ab\\", "%\\\\\\"])
def test_a_like_pattern_ending_in_a_lone_backslash_is_refused(operation: str, pattern: str) -> None:
    # The engine failed the run on it, quoting its plan (tenant filter included).
    query = {"filters": [{"key": "m", "operation": "=", "value": 1},
                         {"key": "m", "operation": operation, "value": pattern}]}  # fmt: skip
    assert errors_of(query) == {"filters[1].value": LONE_BACKSLASH}


@pytest.mark.parametrize("pattern", ["\\\\", "a\\%", "\\_%", "100\\%\\\\", ""])
def test_like_patterns_with_escaped_backslashes_are_valid(pattern: str) -> None:
    validate_fields({"filters": [{"key": "m", "operation": "LIKE", "value": pattern}]})


@pytest.mark.parametrize(
    ("data", "field", "example"),
    [
        ({"keys": ["a"]}, "keys[0]", '{"key": "data.userId"}'),
        ({"group_bys": ["a"]}, "group_bys[0]", '{"key": "data.userId"}'),
        ({"calculations": ["COUNT"]}, "calculations[0]", '{"operator": "P99", "key": "duration"}'),
        ({"filters": ["a"]}, "filters[0]", '{"key": "duration", "operation": ">", "value": 100}'),
        ({"namespaces": ["a"]}, "namespaces[0]", '{"type": "service", "value": "checkout"}'),
        ({"orders": ["a"]}, "orders[0]", '{"key": "P99(duration)", "order": "DESCENDING"}'),
        ({"needle": "a"}, "needle", '{"value": "timeout"'),
    ],
)
def test_a_value_that_should_be_an_object_is_told_its_shape(
    data: dict[str, Any], field: str, example: str
) -> None:
    """Not the name of the class that reads it ("instance of KeySpec")."""
    message = errors_of(data)[field]
    assert message.startswith(f"must be an object, e.g. {example}")
    assert "instance" not in message and "Spec" not in message


def test_a_query_has_one_heatmap_with_a_key() -> None:
    heatmap = {"operator": "HEATMAP", "key": "duration"}
    assert errors_of({"calculations": [heatmap, {**heatmap, "key": "size"}]}) == {
        "calculations[1].operator": "one HEATMAP per query"
    }
    assert errors_of({"calculations": [{"operator": "HEATMAP"}]}) == {
        "calculations[0].key": "HEATMAP needs a key"
    }


@pytest.mark.parametrize(
    ("field", "item"),
    [
        ("namespaces", {"type": "dataset", "value": "logs"}),
        ("keys", {"key": "a"}),
        ("calculations", {"operator": "COUNT"}),
        ("filters", {"key": "a", "operation": "EXISTS"}),
        ("group_bys", {"key": "a"}),
        ("orders", {"key": "COUNT"}),
    ],
)
def test_each_list_holds_at_most_a_hundred_items(field: str, item: dict[str, str]) -> None:
    assert errors_of({field: [item] * 101}) == {field: "at most 100 items; 101 given"}
    try:  # a hundred may be refused for something else (the same name twice), not the count
        validate_fields({field: [item] * 100})
    except BadRequest as exc:
        assert field not in {e["field"] for e in exc.errors or []}


@pytest.mark.parametrize("operation", ["IN", "NOT_IN"])
@pytest.mark.parametrize("as_text", [False, True], ids=["array", "text"])
def test_a_list_filter_holds_at_most_as_many_values_as_a_statement_could(
    operation: str, as_text: bool
) -> None:
    """More could never fit in a statement; 2.9 million took 24 s to build into one
    before its size was refused."""

    def query(n: int) -> dict[str, Any]:
        values = [str(i) for i in range(n)]
        value = ",".join(values) if as_text else values
        return {"filters": [{"key": "k", "operation": operation, "value": value}]}

    assert validate_fields(query(MAX_LIST_VALUES)).filters
    assert errors_of(query(MAX_LIST_VALUES + 1)) == {
        "filters[0].value": f"{operation} takes at most 30,000 values"
    }
