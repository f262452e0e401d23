"""Query results through the whole server agree with a plain-Python evaluation.

A few thousand varied events (mixed types, missing keys, nesting, dotted keys,
arrays) go in through the Events API; many queries covering every operation
and calculation, with group-bys, orders, namespaces and needles, run through
the query-run API; each answer is compared with ``tests/query_reference.py``
computing the same over the events as read back. Exact for COUNT, SUM, MIN,
MAX, AVG and COUNT_DISTINCT; within 1% for percentiles, STDDEV and VARIANCE.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from tests import query_reference as ref
from tests import web
from tests.support import LiveServer, Tenant

SPAN_MS = 6 * 3600 * 1000
LOGS, AUDIT = 2400, 600
NUMERIC_CALCS = ["SUM", "AVG", "MIN", "MAX", "MEDIAN", "STDDEV", "VARIANCE"]
PERCENTILES = ["P001", "P01", "P05", "P10", "P25", "P75", "P90", "P95", "P99", "P999"]


@dataclass
class Loaded:
    server: LiveServer
    tenant: Tenant
    other: Tenant
    records: list[ref.Record]
    frm: int
    to: int


def _send(server: LiveServer, key: str, dataset: str, events: list[Any], **headers: str) -> None:
    # Serialised like the server does (orjson), so `raw` and the needle see the same text.
    for i in range(0, len(events), 500):
        body = b"[" + b",".join(orjson.dumps(e) for e in events[i : i + 500]) + b"]"
        r = web.post(
            f"{server.events_url}/v1/{dataset}",
            content=body,
            headers={"x-api-key": key, "content-type": "application/json", **headers},
            timeout=60,
        )
        assert r.status_code == 202, r.text


def _read_back(server: LiveServer, tenant: Tenant) -> list[dict[str, Any]]:
    r = web.get(
        f"{server.url}/v1/events",
        params={"limit": 10_000},
        headers={"Authorization": tenant.admin_key},
        timeout=60,
    )
    assert r.status_code == 200, r.text
    events: list[dict[str, Any]] = r.json()["events"]
    return events


def _records(stored: list[dict[str, Any]]) -> list[ref.Record]:
    out = []
    for whole in stored:
        system = {name: whole.pop(name) for name in ref.SYSTEM}
        out.append(ref.make_record(whole, orjson.dumps(whole), system))
    return out


@pytest.fixture(scope="module")
def loaded(server: LiveServer) -> Loaded:
    tenant, other = server.new_tenant(), server.new_tenant()
    now = int(time.time() * 1000)
    events = ref.generate_events(LOGS + AUDIT, seed=20261121, now_ms=now, span_ms=SPAN_MS)
    _send(server, tenant.ingest_key, "logs", events[:LOGS])
    _send(server, tenant.ingest_key, "audit", events[LOGS:], **{"x-namespace": "lambda-x"})
    # The other tenant writes into datasets of the same names: none of it may show up.
    noise = ref.generate_events(700, seed=7, now_ms=now, span_ms=SPAN_MS)
    _send(server, other.ingest_key, "logs", noise)

    stored = _read_back(server, tenant)
    records = _records(stored)
    sent = Counter(orjson.dumps(e) for e in events)
    assert Counter(r.raw.encode() for r in records) == sent, "events read back differ"
    return Loaded(server, tenant, other, records, frm=now - SPAN_MS, to=now + 1)


def run_query(
    loaded: Loaded, query: dict[str, Any], key: str | None = None, **options: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(query_run, data) of a completed run of an inline query."""
    headers = {"Authorization": key or loaded.tenant.admin_key}
    body = {"query": query, "from": loaded.frm, "to": loaded.to, **options}
    url = f"{loaded.server.url}/v1/query_run"
    r = web.post(url, json=body, headers=headers, timeout=30)
    assert r.status_code == 200, r.text
    run_id = r.json()["query_run"]["id"]
    got = web.get(f"{url}/{run_id}", params={"wait": 10}, headers=headers, timeout=30)
    assert got.status_code == 200, got.text
    run, data = got.json()["query_run"], got.json()["data"]
    assert run["status"] == "COMPLETED", run
    return run, data


def count(op: str, key: str, value: Any = None) -> dict[str, Any]:
    flt: dict[str, Any] = {"key": key, "operation": op}
    if value is not None:
        flt["value"] = value
    return {"calculations": [{"operator": "COUNT"}], "filters": [flt]}


def by(key: str, *calcs: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"calculations": list(calcs), "group_bys": [{"key": key}], **extra}


def calc(operator: str, key: str | None = None, alias: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"operator": operator}
    if key:
        out["key"] = key
    if alias:
        out["alias"] = alias
    return out


CALCULATION_QUERIES: dict[str, dict[str, Any]] = {
    "count-all": {"calculations": [calc("COUNT")]},
    "count-by-service": by(
        "_service", calc("COUNT"), orders=[{"key": "COUNT", "order": "DESCENDING"}]
    ),
    "numeric-by-service": by("service", *(calc(op, "duration") for op in NUMERIC_CALCS)),
    "percentiles-by-dataset": by("_dataset", *(calc(op, "duration") for op in PERCENTILES)),
    "count-key-and-distinct": by(
        "http.method",
        calc("COUNT", "duration"),
        calc("COUNT_DISTINCT", "requestId"),
        calc("COUNT_DISTINCT", "status", alias="kinds"),
        orders=[{"key": "http.method", "order": "ASCENDING"}],
    ),
    "mixed-type-groups": by("status", calc("COUNT"), calc("AVG", "duration", alias="avg")),
    "nested-group-order-alias": by(
        "data.http.status",
        calc("P99", "duration", alias="p99"),
        calc("MAX", "duration"),
        orders=[{"key": "p99", "order": "ASCENDING"}],
    ),
    "two-groups": {
        "calculations": [calc("COUNT"), calc("SUM", "duration")],
        "group_bys": [{"key": "_namespace"}, {"key": "ok"}],
        "orders": [{"key": "SUM(duration)", "order": "DESCENDING"}],
    },
    "group-by-alone": {"group_bys": [{"key": "data.depth.level"}]},
    "distinct-users-by-namespace": by("namespace", calc("COUNT_DISTINCT", "data.userId")),
    "ratio-stats": {"calculations": [calc(op, "ratio") for op in ["SUM", "AVG", "STDDEV", "MIN"]]},
    "gt": count(">", "duration", 1000),
    "gte-float": count(">=", "duration", 2500.5),
    "lt": count("<", "duration", 0),
    "lte": count("<=", "duration", 100),
    "eq-string": count("=", "status", "ok"),
    "eq-number": count("=", "status", 200),
    "eq-boolean": count("=", "ok", True),
    "neq": count("!=", "status", 200),
    "string-compare": count(">", "message", "delta"),
    "like": count("LIKE", "message", "%error%"),
    "like-escaped-percent": count("LIKE", "message", "%50\\% off%"),
    "not-like": count("NOT_LIKE", "message", "alpha%"),
    "includes-string": count("INCLUDES", "tags", "red"),
    "includes-number": count("INCLUDES", "tags", 10),
    "includes-boolean-in-mixed-arrays": count("INCLUDES", "tags", True),
    "date-like-text": by(
        "when",
        calc("COUNT"),
        filters=[{"key": "when", "operation": "STARTS_WITH", "value": "2024-05-01"}],
    ),
    "key-no-event-holds": count("=", "no.such.key", 1),
    "includes-substring": count("INCLUDES", "message", "login"),
    "does-not-include": count("DOES_NOT_INCLUDE", "tags", "red"),
    "regex": count("MATCH_REGEX", "message", "^(alpha|beta) "),
    "regex-nested": count("MATCH_REGEX", "data.depth.name", "a$"),
    "exists": count("EXISTS", "data.depth.level"),
    "does-not-exist": count("DOES_NOT_EXIST", "duration"),
    "in-list": count("IN", "service", ["api", "web"]),
    "in-comma-string": count("IN", "status", "200, 404"),
    "not-in": count("NOT_IN", "status", [200, "ok"]),
    "starts-with": count("STARTS_WITH", "requestId", "req-00"),
    "key-reference": count("<", "limit", {"key": "duration", "type": "number"}),
    "dotted-key": count("=", "http.method", "GET"),
    "odd-key-name": count("=", "we`ird\\key.sp ace", 1),
    "system-field": count("=", "_service", "Billing"),
    "or-combination": {
        "calculations": [calc("COUNT"), calc("MAX", "duration")],
        "filters": [
            {"key": "duration", "operation": ">", "value": 4900},
            {"key": "status", "operation": "=", "value": "ok"},
        ],
        "filter_combination": "OR",
    },
    "and-filters-grouped": by(
        "data.userId",
        calc("COUNT"),
        calc("AVG", "duration"),
        filters=[
            {"key": "ok", "operation": "=", "value": True},
            {"key": "duration", "operation": ">=", "value": 0},
        ],
    ),
    "namespaces": {
        "calculations": [calc("COUNT")],
        "namespaces": [{"type": "dataset", "value": "logs"}, {"type": "service", "value": "api"}],
    },
    "lambda-namespace": by(
        "_dataset", calc("COUNT"), namespaces=[{"type": "lambda", "value": "lambda-x"}]
    ),
    "needle": {"calculations": [calc("COUNT")], "needle": {"value": "timeout"}},
    "needle-case": {
        "calculations": [calc("COUNT")],
        "needle": {"value": "Timeout", "matchCase": True},
    },
    "needle-regex": {
        "calculations": [calc("COUNT")],
        "needle": {"value": "user_login #9[0-9]", "isRegex": True},
    },
    # Looked up in the phrases and cased indexes' dictionaries (query.needle), in the
    # embedded engine and on a server.
    "needle-regex-dictionary": {
        "calculations": [calc("COUNT")],
        "needle": {"value": "(alpha|gamma) user_l[a-z]+", "isRegex": True},
    },
    "needle-regex-dictionary-case": by(
        "_service",
        calc("COUNT"),
        needle={"value": "(alpha|beta) Time(out|d)", "isRegex": True, "matchCase": True},
    ),
}


@pytest.mark.parametrize("name", sorted(CALCULATION_QUERIES))
def test_calculations_match_the_reference(loaded: Loaded, name: str) -> None:
    query = CALCULATION_QUERIES[name]
    run, data = run_query(loaded, query)
    granularity = run["granularity"]
    expected = ref.aggregate(loaded.records, query, loaded.frm, loaded.to, granularity)
    buckets = len(range(loaded.frm, loaded.to, granularity))
    problems = ref.check_calculations(query, data, expected, run["limit"], buckets)
    assert not problems, "\n".join(problems[:20])


def test_top_groups_with_a_limit_and_a_granularity(loaded: Loaded) -> None:
    query = by(
        "requestId",
        calc("COUNT"),
        calc("MEDIAN", "duration", alias="median"),
        orders=[
            {"key": "COUNT", "order": "DESCENDING"},
            {"key": "requestId", "order": "ASCENDING"},
        ],
    )
    run, data = run_query(loaded, query, limit=7, granularity=15 * 60 * 1000)
    assert (run["limit"], run["granularity"]) == (7, 15 * 60 * 1000)
    expected = ref.aggregate(loaded.records, query, loaded.frm, loaded.to, run["granularity"])
    buckets = len(range(loaded.frm, loaded.to, run["granularity"]))
    problems = ref.check_calculations(query, data, expected, 7, buckets)
    assert not problems, "\n".join(problems[:20])
    # the top 7 by count, ties broken by the group key
    ranked = sorted(expected["aggregates"].items(), key=lambda kv: (-kv[1]["_count"], kv[0]))
    assert [ref.group_id(a["groups"]) for a in data["aggregates"]] == [g for g, _ in ranked[:7]]


EVENT_QUERIES: dict[str, tuple[dict[str, Any], dict[str, int]]] = {
    "newest-whole-events": ({}, {"limit": 50}),
    "page-two": (
        {"namespaces": [{"type": "dataset", "value": "logs"}]},
        {"limit": 40, "offset": 40},
    ),
    "chosen-keys": (
        {
            "keys": [
                {"key": "message"},
                {"key": "data.userId"},
                {"key": "http.method"},
                {"key": "_service"},
                {"key": "_timestamp"},
            ],
            "filters": [{"key": "tags", "operation": "INCLUDES", "value": "green"}],
        },
        {"limit": 100},
    ),
    "needle-events": ({"needle": {"value": "gamma #1"}}, {"limit": 30}),
    "query-limit-wins": ({"limit": 5, "filters": [{"key": "ok", "operation": "EXISTS"}]}, {}),
}


@pytest.mark.parametrize("name", sorted(EVENT_QUERIES))
def test_events_match_the_reference(loaded: Loaded, name: str) -> None:
    query, options = EVENT_QUERIES[name]
    run, data = run_query(loaded, query, **options)
    limit = min(run["limit"], query.get("limit", run["limit"]))
    expected = ref.events(loaded.records, query, loaded.frm, loaded.to, limit, run["offset"])
    assert data["count"] == expected["count"]
    assert data["events"] == expected["events"]
    assert set(data["statistics"]) == {"elapsed", "rows_read", "bytes_read"}


def test_a_narrow_timeframe_keeps_only_its_events(loaded: Loaded) -> None:
    frm = loaded.frm + SPAN_MS // 3
    to = frm + 3600 * 1000
    query = by("_service", calc("COUNT"), calc("SUM", "duration"))
    headers = {"Authorization": loaded.tenant.admin_key}
    url = f"{loaded.server.url}/v1/query_run"
    run_id = web.post(url, json={"query": query, "from": frm, "to": to}, headers=headers).json()[
        "query_run"
    ]["id"]
    body = web.get(f"{url}/{run_id}", params={"wait": 10}, headers=headers, timeout=30).json()
    run, data = body["query_run"], body["data"]
    expected = ref.aggregate(loaded.records, query, frm, to, run["granularity"])
    buckets = len(range(frm, to, run["granularity"]))
    problems = ref.check_calculations(query, data, expected, run["limit"], buckets)
    assert not problems, "\n".join(problems[:20])


def test_the_other_tenant_counts_only_its_own_events(loaded: Loaded) -> None:
    _, mine = run_query(loaded, {"calculations": [calc("COUNT")]})
    _, theirs = run_query(loaded, {"calculations": [calc("COUNT")]}, key=loaded.other.admin_key)
    assert mine["aggregates"][0]["values"]["COUNT"] == LOGS + AUDIT
    assert theirs["aggregates"][0]["values"]["COUNT"] == 700
    _, events = run_query(loaded, {"needle": {"value": "req-"}}, key=loaded.other.admin_key)
    own_ids = {r.system["_id"] for r in loaded.records}
    assert events["count"] == 700
    assert not own_ids & {e["_id"] for e in events["events"]}
