"""A failed run says why in the query's terms, known by the engine's error code, never its text."""

from __future__ import annotations

import pytest

from limelight.query.compile import PatternFields
from limelight.runs.limits import RunLimits, store_failure_message
from limelight.settings import Settings
from limelight.store.events.base import engine_error

LIMITS = RunLimits.from_settings(Settings())
# What chDB raised for a filter LIKE "\" (2026-11), tenant filter and all.
LIKE_FAILURE = (
    "Code: 25. DB::Exception: Invalid escape sequence at the end of LIKE pattern '\\': while"
    " executing 'FUNCTION and(equals(__table1.workspace_id, '1m84wsid'_String) :: 2,"
    " equals(__table1.environment_id, '1m84envid'_String) :: 3) -> and(..) UInt8 : 7'."
    " (CANNOT_PARSE_ESCAPE_SEQUENCE)"
)


def plan_text(code: int, name: str) -> str:
    return LIKE_FAILURE.replace("Code: 25.", f"Code: {code}.").replace(
        "CANNOT_PARSE_ESCAPE_SEQUENCE", name
    )


@pytest.mark.parametrize(
    ("detail", "expected"),
    [
        (plan_text(159, "TIMEOUT_EXCEEDED"), "the query run took longer than its limit of 10 s"),
        (plan_text(396, "TOO_MANY_ROWS_OR_BYTES"), "the result is larger than the limit of 6MB"),
        (plan_text(241, "MEMORY_LIMIT_EXCEEDED"), "the query needed more memory than its limit"),
        (plan_text(427, "CANNOT_COMPILE_REGEXP"), "a regular expression of the query is not"),
        (LIKE_FAILURE, "a LIKE pattern of the query ends in a lone backslash"),
        (
            plan_text(43, "ILLEGAL_TYPE_OF_ARGUMENT"),
            "the events store could not run the query (error code 43: ILLEGAL_TYPE_OF_ARGUMENT)",
        ),
        (plan_text(9999, "NEW"), "the events store could not run the query (error code 9999)"),
        ("connection reset", "the events store could not run the query (no error code)"),
    ],
)
def test_engine_failures_are_told_by_their_code_without_the_engines_text(
    detail: str, expected: str
) -> None:
    message = store_failure_message(engine_error(RuntimeError(detail)), LIMITS)
    assert message.startswith(expected)
    for internal in ("1m84wsid", "1m84envid", "__table", "FUNCTION", "DB::Exception"):
        assert internal not in message


@pytest.mark.parametrize(
    ("patterns", "expected"),
    [
        (
            PatternFields(regex=("filters[2].value",)),
            "the regular expression in filters[2].value is not valid RE2 syntax",
        ),
        (
            PatternFields(regex=("filters[0].value", "needle.value")),
            "a regular expression of the query (filters[0].value, needle.value)"
            " is not valid RE2 syntax",
        ),
    ],
)
def test_a_pattern_the_engine_cannot_compile_is_named_by_its_field(
    patterns: PatternFields, expected: str
) -> None:
    detail = plan_text(427, "CANNOT_COMPILE_REGEXP")
    assert store_failure_message(engine_error(RuntimeError(detail)), LIMITS, patterns) == expected
