"""Compiled queries answer like the plain-Python reference over thousands of varied events.

Every operator and every calculation is exercised, with group-bys, orders,
namespaces, needles and limits. COUNT, SUM, MIN, MAX, AVG and COUNT_DISTINCT
must be exact; percentiles, MEDIAN, STDDEV and VARIANCE within 1%.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from limelight.query.compile import Plan, RunOptions, Timeframe, compile_run
from limelight.query.keys import UNKNOWN, StoredTypes
from limelight.query.results import shape
from limelight.query.spec import validate_fields
from limelight.runs.execute import typed_plan
from limelight.runs.limits import RunLimits
from limelight.settings import Settings
from limelight.tenant import Tenant
from tests import query_reference as ref

TENANT = Tenant("ws_correct", "env_correct")
OTHER = Tenant("ws_correct", "env_other")
SPAN_MS = 2 * 3600_000
NOW_MS = (int(time.time() * 1000) // 60_000) * 60_000
FULL = Timeframe(NOW_MS - SPAN_MS, NOW_MS + 1)
LAST_HOUR = Timeframe(NOW_MS - 3600_000, NOW_MS)
LIMITS = RunLimits.from_settings(Settings())  # the defaults

OPERATIONS: list[tuple[str, Any]] = [
    ("=", "api"),
    ("=", 200),
    ("=", True),
    ("!=", 200),
    ("!=", "GET"),
    (">", 1000),
    (">", "m"),
    (">=", 2.5),
    ("<", 0),
    ("<", "b"),
    ("<", 150),
    ("<=", 404),
    ("LIKE", "%a_e%"),
    ("LIKE", "req-001%"),
    ("NOT_LIKE", "%error%"),
    ("INCLUDES", "red"),
    ("INCLUDES", 10),
    ("INCLUDES", "ET"),
    ("DOES_NOT_INCLUDE", "red"),
    ("DOES_NOT_INCLUDE", 2),
    ("MATCH_REGEX", "^(beta|Timeout) "),
    ("MATCH_REGEX", "[0-9]{2}$"),
    ("STARTS_WITH", "u1"),
    ("STARTS_WITH", "req-00"),
    ("STARTS_WITH", "alpha"),
    ("STARTS_WITH", "2024-05-01T"),
    ("=", "2024-05-01"),
    ("INCLUDES", True),
    ("EXISTS", None),
    ("DOES_NOT_EXIST", None),
    ("IN", [404, 500, "ok", True]),
    ("IN", "GET, get, 200"),
    ("NOT_IN", ["GET", "POST"]),
    ("NOT_IN", [200, 201]),
]
KEYS = [
    "duration",
    "status",
    "ok",
    "tags",
    "message",
    "http.method",
    "data.userId",
    "data.http.status",
    "data.depth",
    "_service",
    "_timestamp",
    "requestId",
    "when",
]
CALCULATIONS = [
    "COUNT",
    "COUNT_DISTINCT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "MEDIAN",
    "P001",
    "P01",
    "P05",
    "P10",
    "P25",
    "P75",
    "P90",
    "P95",
    "P99",
    "P999",
    "STDDEV",
    "VARIANCE",
]
GROUPINGS: list[list[str]] = [
    [],
    ["_service"],
    ["data.userId"],
    ["http.method", "ok"],
    ["status"],
    ["_dataset", "_namespace"],
    ["when"],
]


def _filter(op: str, key: str, value: Any) -> dict[str, Any]:
    flt: dict[str, Any] = {"key": key, "operation": op}
    if value is not None:
        flt["value"] = value
    return flt


def operator_queries() -> Iterator[tuple[str, dict[str, Any], RunOptions]]:
    """Every operation on every key, half as event lists and half as counts per group."""
    n = 0
    for op, value in OPERATIONS:
        for key in KEYS:
            n += 1
            query: dict[str, Any] = {"filters": [_filter(op, key, value)]}
            if n % 2:
                query["calculations"] = [{"operator": "COUNT"}]
                query["group_bys"] = [{"key": k} for k in GROUPINGS[n % len(GROUPINGS)]]
                yield f"{op} {key} {value!r} grouped", query, RunOptions(limit=1000)
            else:
                yield f"{op} {key} {value!r}", query, RunOptions(limit=20, offset=n % 3)


def calculation_queries() -> Iterator[tuple[str, dict[str, Any], RunOptions]]:
    for i, op in enumerate(CALCULATIONS):
        for j, groups in enumerate(GROUPINGS):
            calc: dict[str, Any] = {"operator": op}
            if op != "COUNT" or j % 2:
                calc["key"] = (
                    "duration" if op != "COUNT_DISTINCT" else ["requestId", "status"][j % 2]
                )
            name = ref.value_name(calc)
            query: dict[str, Any] = {
                "calculations": [calc, {"operator": "COUNT", "alias": "n"}],
                "group_bys": [{"key": k} for k in groups],
            }
            if groups:
                direction = "ASCENDING" if (i + j) % 2 else "DESCENDING"
                query["orders"] = [{"key": name, "order": direction}]
            limit = 3 if (i + j) % 5 == 0 and groups else 1000
            yield f"{op} by {groups}", query, RunOptions(limit=limit, granularity_ms=600_000)


def feature_queries() -> Iterator[tuple[str, dict[str, Any], RunOptions]]:
    # System fields as calculation keys: text ones hold no numbers (null, SUM 0), and
    # the variance of unix milliseconds needs a numerically stable sum.
    numeric = ("SUM", "AVG", "MIN", "MAX", "MEDIAN", "P99", "STDDEV", "VARIANCE")
    for key in ("_service", "_timestamp"):
        for groups in ([], ["_dataset"], ["status"]):
            yield (
                f"numbers of {key} by {groups}",
                {
                    "calculations": [{"operator": op, "key": key} for op in numeric],
                    "group_bys": [{"key": k} for k in groups],
                },
                RunOptions(granularity_ms=600_000),
            )
    # More buckets than a state per bucket and group is worth: grouping sets instead.
    yield (
        "COUNT and P50 by service over many buckets",
        {
            "calculations": [{"operator": "COUNT"}, {"operator": "MEDIAN", "key": "duration"}],
            "group_bys": [{"key": "_service"}],
        },
        RunOptions(granularity_ms=30_000),
    )
    yield (
        "namespaces",
        {
            "namespaces": [
                {"type": "dataset", "value": "ds-a"},
                {"type": "service", "value": "api"},
                {"type": "service", "value": "Billing"},
                {"type": "lambda", "value": "lambda-x"},
                {"type": "namespace", "value": "ns-a"},
            ],
            "calculations": [{"operator": "SUM", "key": "duration"}],
            "group_bys": [{"key": "_namespace"}],
        },
        RunOptions(),
    )
    for needle in (
        {"value": "TIMEOUT"},
        {"value": "Timeout", "matchCase": True},
        {"value": "timeout", "matchCase": True},
        {"value": '"req-0+2[0-9]"', "isRegex": True},
        {"value": "ÜNÏCODE", "isRegex": True},
        {"value": "50% off"},
        # Letters alone go through the words index (query.needle): inside a
        # word, after "_", at the start and the end of a value, two letters, a key's
        # name, and words that touch only across JSON structure (never a match).
        {"value": "imeou"},
        {"value": "LOGIN"},
        {"value": "alpha"},
        {"value": "off"},
        {"value": "ta"},
        {"value": "duration"},
        {"value": "messagealpha"},
        {"value": "absentword"},
        # The other way: one letter, other scripts, digits.
        {"value": "x"},
        {"value": "ünïcode"},
        {"value": "req-0"},
        # Through the phrases index: spaces, punctuation, snake_case, dotted keys, text
        # across the JSON structure without quotes (query.needle).
        {"value": "Gamma User_login"},
        {"value": "user_login #"},
        {"value": "http.method"},
        {"value": ":true,"},
        {"value": "% off"},
        {"value": "a{{b"},
        {"value": "beta beta"},
        # Quotes and digits read the text where the index finds the rest.
        {"value": '"service":"web'},
        {"value": "off Timeout #9"},
        {"value": "beta error #[0-9]+", "isRegex": True},
        # Regexes whose matches lie inside one token: looked up in the dictionaries.
        {"value": "gamma user_l[a-z]+", "isRegex": True},
        {"value": "time(out|d)|ünï", "isRegex": True},
        {"value": "Time(out|d)", "isRegex": True, "matchCase": True},
        {"value": "gamma user_LOGIN", "matchCase": True},
    ):
        yield f"needle {needle}", {"needle": needle}, RunOptions(limit=50)
        yield (
            f"needle {needle} counted",
            {
                "needle": needle,
                "calculations": [{"operator": "COUNT_DISTINCT", "key": "data.userId"}],
                "group_bys": [{"key": "_service"}],
            },
            RunOptions(),
        )
    refs = [
        (">", {"key": "limit", "type": "number"}),
        ("=", {"key": "data.depth.name", "type": "string"}),
        ("INCLUDES", {"key": "data.depth.name"}),
        ("!=", {"key": "ok", "type": "boolean"}),
    ]
    for op, value in refs:
        yield (
            f"reference {op} {value}",
            {"filters": [_filter(op, "duration" if op != "INCLUDES" else "message", value)]},
            RunOptions(limit=1000),
        )
    yield (
        "OR of three",
        {
            "filters": [
                _filter("=", "status", 500),
                _filter("LIKE", "message", "%Timeout%"),
                _filter("IN", "data.http.status", [503]),
            ],
            "filter_combination": "OR",
            "calculations": [
                {"operator": "P90", "key": "duration"},
                {"operator": "MAX", "key": "duration"},
            ],
            "group_bys": [{"key": "_service"}],
            "orders": [{"key": "_service", "order": "ASCENDING"}],
        },
        RunOptions(),
    )
    yield (
        "AND with needle",
        {
            "filters": [_filter(">", "duration", 100), _filter("EXISTS", "data.userId", None)],
            "needle": {"value": "alpha"},
            "keys": [
                {"key": "duration"},
                {"key": "data.userId"},
                {"key": "_service"},
                {"key": "tags"},
            ],
        },
        RunOptions(limit=30, offset=5),
    )
    yield (
        "query limit caps run limit",
        {"limit": 7, "keys": [{"key": "data"}]},
        RunOptions(limit=50),
    )
    yield (
        "group by nested object path",
        {
            "calculations": [{"operator": "AVG", "key": "data.depth.level"}],
            "group_bys": [{"key": "data.depth.name"}],
        },
        RunOptions(),
    )


QUERIES = [*operator_queries(), *calculation_queries(), *feature_queries()]


@pytest.fixture(scope="session")
def query_store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return ref.shared_chdb_store(tmp_path_factory)


@pytest.fixture(scope="module")
def records(query_store: Any) -> list[ref.Record]:
    events = ref.generate_events(4000, seed=11, now_ms=NOW_MS, span_ms=SPAN_MS)
    stored = []
    for i in range(0, len(events), 1000):  # several inserts: several parts, as in real use
        dataset = "ds-a" if i % 2000 == 0 else "ds-b"
        stored += ref.store_events(query_store, TENANT, dataset, events[i : i + 1000])
    ref.store_events(query_store, OTHER, "ds-a", events[:500])  # never part of an answer
    return stored


def run(
    store: Any, query: dict[str, Any], frame: Timeframe, options: RunOptions, typed: bool
) -> Any:
    """As the runner runs it: ``typed``, reading only the types the keys hold in the
    tenant's events (what the server does); else every type."""
    fields = validate_fields(query)

    def compile_with(stored: StoredTypes) -> Plan:
        return compile_run(
            fields,
            workspace_id=TENANT.workspace_id,
            environment_id=TENANT.environment_id,
            table=store.table,
            timeframe=frame,
            options=options,
            stored=stored,
            dictionaries=store.table,
        )

    plan = compile_with(UNKNOWN)
    if typed:
        plan = typed_plan(store, TENANT, fields, plan, compile_with, LIMITS)
    rows = {
        name: store.query(s.sql, s.params).rows for name, s in plan.statements.by_name().items()
    }
    return plan, ref.as_sent(shape(plan, rows))


# The reference's answer to each query, worked out once for both ways of running it
# (typed and every-type): the same events, query and timeframe give the same answer.
_WANTED: dict[tuple[str, str, int | None, int | None], Any] = {}


@pytest.mark.parametrize(("title", "query", "options"), QUERIES, ids=[q[0] for q in QUERIES])
@pytest.mark.parametrize("typed", [True, False], ids=["typed", "every-type"])
def test_answers_like_the_reference(
    title: str,
    query: dict[str, Any],
    options: RunOptions,
    typed: bool,
    query_store: Any,
    records: Any,
) -> None:
    frame = LAST_HOUR if len(title) % 3 == 0 else FULL
    plan, data = run(query_store, query, frame, options, typed)
    if plan.kind == "events":
        key = (title, "events", plan.limit, plan.offset)
        if key not in _WANTED:
            _WANTED[key] = ref.events(
                records, query, frame.from_ms, frame.to_ms, plan.limit, plan.offset
            )
        want = _WANTED[key]
        assert data["count"] == want["count"]
        assert data["events"] == want["events"]
        return
    key = (title, "calculations", plan.granularity_ms, None)
    if key not in _WANTED:
        _WANTED[key] = ref.aggregate(
            records, query, frame.from_ms, frame.to_ms, plan.granularity_ms
        )
    want = _WANTED[key]
    buckets = -(-(frame.to_ms - frame.from_ms) // plan.granularity_ms)
    assert ref.check_calculations(query, data, want, plan.limit, buckets) == []


def test_queries_cover_every_operation_and_calculation_and_match_events(records: Any) -> None:
    operations = {f["operation"] for _, q, _ in QUERIES for f in q.get("filters", [])}
    calculations = {c["operator"] for _, q, _ in QUERIES for c in q.get("calculations", [])}
    assert operations == {op for op, _ in OPERATIONS}
    assert calculations == set(CALCULATIONS)
    # Empty answers agree trivially (though they do check for false matches across
    # kinds): every operation and calculation must also select events somewhere.
    selecting: dict[str, int] = {}
    for _, query, _ in QUERIES:
        if ref.selects_any(records, query, FULL.from_ms, FULL.to_ms):
            for f in query.get("filters", []):
                selecting[f["operation"]] = selecting.get(f["operation"], 0) + 1
            for c in query.get("calculations", []):
                selecting[c["operator"]] = selecting.get(c["operator"], 0) + 1
    thin = {name: selecting.get(name, 0) for name in operations | calculations}
    assert {name: n for name, n in thin.items() if n < 3} == {}
