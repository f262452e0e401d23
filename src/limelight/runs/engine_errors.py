"""ClickHouse's error codes by name.

The engine's message quotes its plan, with the tenant filter and the
workspace id in it (``FUNCTION and(equals(__table1.workspace_id, '1m84..')``),
so it is never passed on to a client. A failure is known by its numeric code,
which the store reads once (``store.events.base.engine_error``), the same for
chDB and a ClickHouse server.
"""

from __future__ import annotations

from collections.abc import Mapping

# The codes a query run can meet, by ClickHouse's names (``errorCodeToName``).
ERROR_NAMES: Mapping[int, str] = {
    25: "CANNOT_PARSE_ESCAPE_SEQUENCE",
    36: "BAD_ARGUMENTS",
    43: "ILLEGAL_TYPE_OF_ARGUMENT",
    44: "ILLEGAL_COLUMN",
    46: "UNKNOWN_FUNCTION",
    47: "UNKNOWN_IDENTIFIER",
    48: "NOT_IMPLEMENTED",
    49: "LOGICAL_ERROR",
    53: "TYPE_MISMATCH",
    60: "UNKNOWN_TABLE",
    62: "SYNTAX_ERROR",
    69: "ARGUMENT_OUT_OF_BOUND",
    70: "CANNOT_CONVERT_TYPE",
    159: "TIMEOUT_EXCEEDED",
    241: "MEMORY_LIMIT_EXCEEDED",
    352: "AMBIGUOUS_COLUMN_NAME",
    386: "NO_COMMON_TYPE",
    394: "QUERY_WAS_CANCELLED",
    396: "TOO_MANY_ROWS_OR_BYTES",
    407: "DECIMAL_OVERFLOW",
    427: "CANNOT_COMPILE_REGEXP",
    1001: "STD_EXCEPTION",
}
TIMEOUT_EXCEEDED = 159
MEMORY_LIMIT_EXCEEDED = 241
TOO_MANY_ROWS_OR_BYTES = 396
CANNOT_COMPILE_REGEXP = 427
CANNOT_PARSE_ESCAPE_SEQUENCE = 25


def describe_code(code: int | None) -> str:
    """``error code 427: CANNOT_COMPILE_REGEXP``; only the number for a code not listed."""
    if code is None:
        return "no error code"
    name = ERROR_NAMES.get(code)
    return f"error code {code}: {name}" if name else f"error code {code}"
