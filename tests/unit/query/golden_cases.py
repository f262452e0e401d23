"""The golden cases: one query per operator, calculation and feature of the compiler.

Each case is compiled with a fixed tenant and timeframe and pinned in
``golden/<name>.sql``; tests/integration/test_golden_on_chdb.py runs every case
on chDB and compares the answer with the plain-Python reference.
"""

from __future__ import annotations

from typing import Any

from limelight.query.compile import RunOptions, Timeframe

WORKSPACE = "ws_golden"
ENVIRONMENT = "env_golden"
TABLE = "limelight.events"
# A fixed hour; the chDB test stores its events inside it.
TIMEFRAME = Timeframe(from_ms=1_795_000_000_000, to_ms=1_795_003_600_000)
HOUR_MS = 3_600_000


def _filter(op: str, key: str = "duration", value: Any = None) -> dict[str, Any]:
    flt: dict[str, Any] = {"key": key, "operation": op}
    if value is not None:
        flt["value"] = value
    return {"filters": [flt]}


CASES: dict[str, tuple[dict[str, Any], RunOptions]] = {
    # events output
    "events_all": ({}, RunOptions()),
    "events_keys_page": (
        {"keys": [{"key": "data.userId"}, {"key": "_timestamp", "type": "number"}]},
        RunOptions(limit=5, offset=3),
    ),
    "events_limit_clamped": ({"limit": 7}, RunOptions(limit=50_000)),
    # operators
    "op_eq_string": (_filter("=", "service", "api"), RunOptions()),
    "op_eq_number": (_filter("=", "status", 200), RunOptions()),
    "op_eq_boolean": (_filter("=", "ok", True), RunOptions()),
    "op_ne_number": (_filter("!=", "status", 200), RunOptions()),
    "op_gt": (_filter(">", "duration", 1000), RunOptions()),
    "op_gte_float": (_filter(">=", "duration", 2.5), RunOptions()),
    "op_lt": (_filter("<", "duration", 0), RunOptions()),
    "op_lte_string": (_filter("<=", "service", "b"), RunOptions()),
    "op_like": (_filter("LIKE", "message", "%error%"), RunOptions()),
    "op_not_like": (_filter("NOT_LIKE", "message", "alpha%"), RunOptions()),
    "op_includes_string": (_filter("INCLUDES", "tags", "red"), RunOptions()),
    "op_includes_number": (_filter("INCLUDES", "tags", 10), RunOptions()),
    "op_does_not_include": (_filter("DOES_NOT_INCLUDE", "tags", "red"), RunOptions()),
    "op_match_regex": (_filter("MATCH_REGEX", "message", "^(beta|gamma) "), RunOptions()),
    "op_starts_with": (_filter("STARTS_WITH", "requestId", "req-001"), RunOptions()),
    "op_exists": (_filter("EXISTS", "data.depth.level"), RunOptions()),
    "op_does_not_exist": (_filter("DOES_NOT_EXIST", "duration"), RunOptions()),
    "op_in_array": (_filter("IN", "status", [404, 500, "ok"]), RunOptions()),
    "op_in_comma_string": (_filter("IN", "status", "201, ok"), RunOptions()),
    "op_not_in": (_filter("NOT_IN", "http.method", ["GET", "POST"]), RunOptions()),
    "op_key_reference": (
        _filter(">", "duration", {"key": "limit", "type": "number"}),
        RunOptions(),
    ),
    "op_system_field": (_filter("=", "_dataset", "golden-a"), RunOptions()),
    "op_timestamp": (_filter(">=", "_timestamp", 1_795_001_800_000), RunOptions()),
    "op_nested_and_dotted": (
        {
            "filters": [
                {"key": "data.http.status", "operation": "=", "value": 404},
                {"key": "http.method", "operation": "=", "value": "GET"},
            ],
            "filter_combination": "OR",
        },
        RunOptions(),
    ),
    "op_odd_key_name": (_filter("EXISTS", "we`ird\\key.sp ace"), RunOptions()),
    # A key holding an object is present when the object holds a value; read whole here.
    "op_exists_object": (_filter("EXISTS", "error"), RunOptions()),
    "op_ne_object": (_filter("!=", "error", "text"), RunOptions()),
    # {"twice.n": 1, "twice": {"n": "second"}}: the first value of the path counts.
    "calc_path_named_twice": (
        {
            "calculations": [
                {"operator": "SUM", "key": "twice.n"},
                {"operator": "COUNT_DISTINCT", "key": "twice.n"},
            ],
            "group_bys": [{"key": "twice.n"}],
        },
        RunOptions(),
    ),
    # needle
    "needle_plain": ({"needle": {"value": "TIMEOUT"}}, RunOptions()),
    "needle_case": ({"needle": {"value": "Timeout", "matchCase": True}}, RunOptions()),
    "needle_regex": ({"needle": {"value": 'req-0+1[0-9]"', "isRegex": True}}, RunOptions()),
    "needle_two_letters": ({"needle": {"value": "Ta"}}, RunOptions()),
    "needle_one_letter": ({"needle": {"value": "a"}}, RunOptions()),
    "needle_digits": ({"needle": {"value": "req-0001"}}, RunOptions()),
    "needle_other_script": ({"needle": {"value": "ünïcode"}}, RunOptions()),
    "needle_phrase": ({"needle": {"value": "Gamma user_login"}}, RunOptions()),
    "needle_dotted": ({"needle": {"value": "http.method"}}, RunOptions()),
    "needle_number_with_words": ({"needle": {"value": "off Timeout #9"}}, RunOptions()),
    "needle_across_json": ({"needle": {"value": '"service":"web'}}, RunOptions()),
    "needle_case_phrase": (
        {"needle": {"value": "Timeout user_login", "matchCase": True}},
        RunOptions(),
    ),
    "needle_case_narrowed": (
        {"needle": {"value": 'user_login #1"', "matchCase": True}},
        RunOptions(),
    ),
    "needle_case_number": (
        {"needle": {"value": "error #9", "matchCase": True}},
        RunOptions(),
    ),
    "needle_regex_literal": (
        {"needle": {"value": r"(beta|gamma) error #[0-9]+", "isRegex": True}},
        RunOptions(),
    ),
    # Every match inside one token of an index: the tokens its dictionary finds, looked up.
    "needle_regex_dictionary": (
        {"needle": {"value": "gamma user_l[a-z]+", "isRegex": True}},
        RunOptions(),
    ),
    "needle_regex_dictionary_case": (
        {"needle": {"value": "(alpha|beta) T[a-z]+t", "isRegex": True, "matchCase": True}},
        RunOptions(),
    ),
    # namespaces
    "namespaces": (
        {
            "namespaces": [
                {"type": "dataset", "value": "golden-a"},
                {"type": "service", "value": "api"},
                {"type": "service", "value": "web"},
                {"type": "lambda", "value": "ns-a"},
            ]
        },
        RunOptions(),
    ),
    # calculations
    "calc_count": ({"calculations": [{"operator": "COUNT"}]}, RunOptions()),
    "calc_count_key": ({"calculations": [{"operator": "COUNT", "key": "ok"}]}, RunOptions()),
    "calc_all_by_service": (
        {
            "calculations": [
                {"operator": op, "key": "duration"}
                for op in ("COUNT_DISTINCT", "SUM", "AVG", "MIN", "MAX", "MEDIAN", "STDDEV")
            ]
            + [{"operator": "VARIANCE", "key": "duration", "alias": "var"}],
            "group_bys": [{"key": "_service", "type": "string"}],
            "orders": [{"key": "_service", "order": "ASCENDING"}],
        },
        RunOptions(granularity_ms=600_000),
    ),
    "calc_resampled_by_service_and_dataset": (
        {
            "calculations": [
                {"operator": "COUNT"},
                {"operator": "COUNT", "key": "duration"},
                *(
                    {"operator": op, "key": "duration"}
                    for op in ("SUM", "AVG", "MIN", "MAX", "P99", "STDDEV", "VARIANCE")
                ),
            ],
            "group_bys": [{"key": "_service"}, {"key": "_dataset"}],
            "orders": [{"key": "AVG(duration)", "order": "DESCENDING"}],
        },
        RunOptions(limit=3, granularity_ms=600_000),
    ),
    "calc_resampled_group_only": ({"group_bys": [{"key": "_dataset"}]}, RunOptions()),
    "calc_numbers_of_a_text_system_field": (
        {
            "calculations": [
                {"operator": op, "key": "_service"} for op in ("SUM", "AVG", "P99", "VARIANCE")
            ],
            "group_bys": [{"key": "_dataset"}],
        },
        RunOptions(),
    ),
    "calc_by_service_over_many_buckets": (
        {"calculations": [{"operator": "COUNT"}], "group_bys": [{"key": "_service"}]},
        RunOptions(granularity_ms=10_000),
    ),
    "calc_heatmap": (
        {"calculations": [{"operator": "HEATMAP", "key": "duration"}, {"operator": "COUNT"}]},
        RunOptions(),
    ),
    "calc_heatmap_grouped_filtered": (
        {
            "calculations": [{"operator": "HEATMAP", "key": "duration"}],
            "group_bys": [{"key": "_service"}],
            "filters": [{"key": "status", "operation": "!=", "value": 200}],
        },
        RunOptions(granularity_ms=600_000),
    ),
    "calc_percentiles": (
        {
            "calculations": [
                {"operator": op, "key": "duration"}
                for op in ("P001", "P01", "P05", "P10", "P25", "P75", "P90", "P95", "P99", "P999")
            ]
        },
        RunOptions(),
    ),
    "calc_top_groups": (
        {
            "calculations": [{"operator": "COUNT"}, {"operator": "P99", "key": "duration"}],
            "group_bys": [{"key": "status"}, {"key": "data.userId"}],
            "orders": [{"key": "P99(duration)", "order": "DESCENDING"}],
            "filters": [{"key": "duration", "operation": ">", "value": 0}],
        },
        RunOptions(limit=5),
    ),
    "calc_group_only": ({"group_bys": [{"key": "http.method"}]}, RunOptions()),
    "calc_distinct_alias": (
        {
            "calculations": [{"operator": "COUNT_DISTINCT", "key": "requestId", "alias": "reqs"}],
            "group_bys": [{"key": "_namespace"}],
            "orders": [{"key": "reqs", "order": "ASCENDING"}],
        },
        RunOptions(),
    ),
    "calc_distinct_mixed_kinds": (
        {
            "calculations": [
                {"operator": "COUNT_DISTINCT", "key": "status"},
                {"operator": "COUNT_DISTINCT", "key": "_service"},
                {"operator": "COUNT_DISTINCT", "key": "tags"},
            ]
        },
        RunOptions(),
    ),
    # Braces are legal in JSON keys; the key `a{{b` is not the key `a{b`.
    "calc_distinct_braced_keys": (
        {
            "calculations": [
                {"operator": "COUNT_DISTINCT", "key": key} for key in ("a{b", "a{{b", "a}b")
            ]
            + [{"operator": "SUM", "key": "a{b"}, {"operator": "COUNT", "key": "a}b"}],
            "filters": [{"key": "a{{b", "operation": "EXISTS"}],
        },
        RunOptions(),
    ),
    "calc_over_text_only": (
        {
            "calculations": [
                {"operator": op, "key": "message"}
                for op in ("SUM", "AVG", "MIN", "MAX", "MEDIAN", "STDDEV", "VARIANCE")
            ]
        },
        RunOptions(),
    ),
}

# Cases compiled knowing the types each path is stored as (``StoredTypes``), as the
# runner compiles them: only those types are read. They must include every type the
# generated events hold: the chDB test compares the answers with the reference, and
# a type left out shows there as missed events.
_DURATION = frozenset({"Int64", "Float64", "String"})
STORED: dict[str, dict[str, frozenset[str]]] = {
    "typed_p99_by_service_filtered": {
        "duration": _DURATION,
        "status": frozenset({"Int64", "String", "Bool"}),
    },
    "typed_distinct_of_strings": {"requestId": frozenset({"String"})},
    "typed_includes_mixed_arrays": {
        "tags": frozenset(
            {"String", "Array(Nullable(String))", "Array(Nullable(Int64))", "Array(Dynamic)"}
        )
    },
    "typed_absent_key": {"duration": _DURATION},
    "typed_object_presence": {"error": frozenset({"String"}), "data.depth": frozenset()},
    "typed_wide_object": {"data": frozenset()},
}
# The paths below the keys whose presence a case tests (``StoredTypes.below``); None: too
# many to list, the object is read whole.
BELOW: dict[str, dict[str, dict[str, frozenset[str]] | None]] = {
    "typed_absent_key": {"nowhere": {}},
    "typed_object_presence": {
        "error": {
            "error.code": frozenset({"Int64"}),
            "error.message": frozenset({"String"}),
            "error.stack": frozenset({"String"}),
        },
        "data.depth": {
            "data.depth.level": frozenset({"Int64"}),
            "data.depth.name": frozenset({"String"}),
        },
    },
    "typed_wide_object": {"data": None},
}
CASES.update(
    {
        "typed_p99_by_service_filtered": (
            {
                "calculations": [{"operator": "P99", "key": "duration"}],
                "group_bys": [{"key": "_service"}],
                "filters": [{"key": "status", "operation": ">=", "value": 404}],
            },
            RunOptions(granularity_ms=600_000),
        ),
        "typed_distinct_of_strings": (
            {"calculations": [{"operator": "COUNT_DISTINCT", "key": "requestId"}]},
            RunOptions(granularity_ms=600_000),
        ),
        "typed_includes_mixed_arrays": (
            {
                "filters": [{"key": "tags", "operation": "INCLUDES", "value": 2}],
                "calculations": [{"operator": "COUNT"}],
                "group_bys": [{"key": "tags"}],
            },
            RunOptions(),
        ),
        "typed_object_presence": (
            {
                "filters": [
                    {"key": "error", "operation": "EXISTS"},
                    {"key": "data.depth", "operation": "DOES_NOT_EXIST"},
                ],
                "filter_combination": "OR",
                "calculations": [
                    {"operator": "COUNT", "key": "error"},
                    {"operator": "COUNT", "key": "data.depth"},
                ],
                "group_bys": [{"key": "_dataset"}],
            },
            RunOptions(),
        ),
        "typed_wide_object": (
            {
                "filters": [{"key": "data", "operation": "NOT_IN", "value": ["x"]}],
                "calculations": [{"operator": "COUNT", "key": "data"}],
            },
            RunOptions(),
        ),
        # A key no event holds: no value, no match, one null group (and no read).
        "typed_absent_key": (
            {
                "filters": [
                    {"key": "nowhere", "operation": "!=", "value": 1},
                    {"key": "nowhere", "operation": "DOES_NOT_EXIST"},
                    {"key": "duration", "operation": ">", "value": 100},
                ],
                "filter_combination": "OR",
                "calculations": [
                    {"operator": "COUNT_DISTINCT", "key": "nowhere"},
                    {"operator": "SUM", "key": "nowhere"},
                ],
                "group_bys": [{"key": "nowhere"}],
            },
            RunOptions(),
        ),
    }
)

# Cases over another timeframe than TIMEFRAME (which the events fall inside).
TIMEFRAMES: dict[str, Timeframe] = {
    # Longer than an hour: the page is looked for in the last hour first (`recent`),
    # which holds it here, and then over the whole timeframe.
    "events_recent_hour_first": Timeframe(TIMEFRAME.from_ms - HOUR_MS, TIMEFRAME.to_ms),
    # The last hour ends long after the events: it holds few of them, `newest` tells.
    "events_recent_hour_short": Timeframe(TIMEFRAME.from_ms, TIMEFRAME.to_ms + HOUR_MS - 10_000),
}
CASES.update(
    {
        "events_recent_hour_first": (
            {"namespaces": [{"type": "dataset", "value": "golden-a"}]},
            RunOptions(limit=20),
        ),
        "events_recent_hour_short": ({}, RunOptions(limit=20, offset=5)),
    }
)


def timeframe_of(name: str) -> Timeframe:
    return TIMEFRAMES.get(name, TIMEFRAME)
