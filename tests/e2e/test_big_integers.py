"""Integers a Float64 cannot hold (beyond 2**53: snowflake ids, UInt64) are compared,
grouped, counted and listed as sent, not merged with their rounded neighbours, while
5 and 5.0 stay one number."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests import web
from tests.support import LiveServer, Tenant

BIG = 2**53  # 9007199254740992: 2**53 + 1 is the first integer a Float64 rounds
MAX_U64 = 2**64 - 1
MIXED = [2**60, 2**63, 1.5]
# UInt64 beyond Int64, and integers about 1e16 (a double there holds even ones only).
UNSIGNED = [2**63 - 1, 2**63, 2**63 + 1, MAX_U64]
TENS = [10**16, 10**16 + 1, 10**16 + 2]
# Whole floats as a client sends them: stored as the integers their shortest digits write
# (1152921504606847000, 9223372036854776000), not as the double's own.
FLOATS = [1.152921504606847e18, 9.223372036854775808e18]


@pytest.fixture(scope="module")
def ids(server: LiveServer) -> Tenant:
    tenant = server.new_tenant()
    now = int(time.time() * 1000)
    values: list[Any] = [BIG, BIG + 1, BIG + 2, MAX_U64, 5, 5.0, -(BIG + 1)]
    events = [{"timestamp": now - 1000 - i, "id": v} for i, v in enumerate(values)]
    for i, event in enumerate(events[:3]):  # a key held as Int64 alone: read as stored
        event["snowflake"] = BIG + i
    events.append({"timestamp": now - 2000, "tags": [BIG + 1, 7]})
    # Integers a double holds exactly, in a key stored as three types (Int64, UInt64 and
    # Float64): their digits are not a double's shortest form (1152921504606847000).
    events += [{"timestamp": now - 3000 - i, "mixed": v} for i, v in enumerate(MIXED)]
    events += [{"timestamp": now - 4000 - i, "u": v} for i, v in enumerate(UNSIGNED)]
    events += [{"timestamp": now - 5000 - i, "tens": v} for i, v in enumerate(TENS)]
    events += [{"timestamp": now - 6000 - i, "floats": v} for i, v in enumerate(FLOATS)]
    assert server.send(tenant.ingest_key, "ids", events).status_code == 202
    return tenant


def run(server: LiveServer, tenant: Tenant, query: dict[str, Any]) -> dict[str, Any]:
    now = int(time.time() * 1000)
    body = {"query": query, "from": now - 3_600_000, "to": now + 60_000}
    r = web.post(
        f"{server.url}/v1/query_run",
        params={"wait": 30},
        json=body,
        headers={"Authorization": tenant.admin_key},
        timeout=60,
    )
    assert r.status_code == 200, r.text
    assert r.json()["query_run"]["status"] == "COMPLETED", r.text
    data: dict[str, Any] = r.json()["data"]
    return data


def count(server: LiveServer, tenant: Tenant, *filters: dict[str, Any]) -> int:
    query = {"calculations": [{"operator": "COUNT"}], "filters": list(filters)}
    result: int = run(server, tenant, query)["aggregates"][0]["values"]["COUNT"]
    return result


@pytest.mark.parametrize(
    ("operation", "value", "expected"),
    [
        ("=", BIG + 1, 1),
        ("=", BIG, 1),
        ("!=", BIG + 1, 6),
        (">", BIG, 3),  # BIG + 1, BIG + 2, MAX_U64
        (">=", BIG + 2, 2),
        ("<", -BIG, 1),
        ("<=", BIG, 4),  # BIG, 5, 5.0, -(BIG + 1)
        ("=", 5, 2),  # 5 and 5.0: one number
        ("IN", [BIG + 1, BIG + 2, 5], 4),
        ("NOT_IN", [BIG + 1, 5.0], 4),
        ("IN", f"{BIG + 1}, 5", 3),  # a list written as text, as the console sends it
        ("NOT_IN", f"{BIG + 1}", 6),
    ],
)
def test_filters_compare_integers_beyond_a_float_exactly(
    server: LiveServer, ids: Tenant, operation: str, value: Any, expected: int
) -> None:
    assert count(server, ids, {"key": "id", "operation": operation, "value": value}) == expected


@pytest.mark.parametrize(
    ("key", "operation", "value", "expected"),
    [
        # Integers past Int64 are UInt64's: compared as such, not as their double.
        ("u", "=", 2**63, 1),
        ("u", "=", 2**63 + 1, 1),
        ("u", ">", 2**63, 2),
        ("u", "<", 2**63, 1),
        ("u", "IN", [2**63 + 1, MAX_U64], 2),
        ("u", "IN", f"{2**63}, {MAX_U64}", 2),
        ("u", "NOT_IN", [2**63], 3),
        # A whole number written as a float is the integer it holds: 1e16 is 10**16,
        # not also 10**16 + 1, which a double rounds to it.
        ("tens", "=", 1e16, 1),
        ("tens", "!=", 1e16, 2),
        ("tens", ">", 1e16, 2),
        ("tens", "IN", [1e16, 5.0], 1),
        ("tens", "IN", "1e16", 1),
        ("id", "=", float(BIG), 1),
        ("id", "<=", float(BIG), 4),
        # The same float finds the event sent with it, and so do its digits.
        ("floats", "=", FLOATS[0], 1),
        ("floats", "=", FLOATS[1], 1),
        ("floats", "IN", "1.152921504606847e18, 9223372036854776000", 2),
        ("floats", "=", 1152921504606847000, 1),
        ("floats", ">", FLOATS[0], 1),
        ("floats", "IN", [-0.0, FLOATS[1]], 1),
        ("tens", "IN", "-0, 10000000000000001", 1),
    ],
)
def test_filters_compare_uint64_and_whole_floats_exactly(
    server: LiveServer, ids: Tenant, key: str, operation: str, value: Any, expected: int
) -> None:
    assert count(server, ids, {"key": key, "operation": operation, "value": value}) == expected


def test_an_array_includes_the_integer_sent_not_its_neighbour(
    server: LiveServer, ids: Tenant
) -> None:
    assert count(server, ids, {"key": "tags", "operation": "INCLUDES", "value": BIG + 1}) == 1
    assert count(server, ids, {"key": "tags", "operation": "INCLUDES", "value": BIG}) == 0


def test_groups_and_distinct_counts_keep_each_integer(server: LiveServer, ids: Tenant) -> None:
    query = {
        "calculations": [{"operator": "COUNT"}],
        "group_bys": [{"key": "id"}],
        "filters": [{"key": "id", "operation": "EXISTS"}],
    }
    groups = {
        a["groups"]["id"]: a["values"]["COUNT"] for a in run(server, ids, query)["aggregates"]
    }
    assert groups == {BIG: 1, BIG + 1: 1, BIG + 2: 1, MAX_U64: 1, 5: 2, -(BIG + 1): 1}
    distinct = run(server, ids, {"calculations": [{"operator": "COUNT_DISTINCT", "key": "id"}]})
    assert distinct["aggregates"][0]["values"]["COUNT_DISTINCT(id)"] == 6


def test_a_key_of_integers_alone_is_grouped_and_counted_as_stored(
    server: LiveServer, ids: Tenant
) -> None:
    query = {"calculations": [{"operator": "COUNT_DISTINCT", "key": "snowflake"}],
             "group_bys": [{"key": "snowflake"}],
             "filters": [{"key": "snowflake", "operation": "EXISTS"}]}  # fmt: skip
    aggregates = run(server, ids, query)["aggregates"]
    assert {a["groups"]["snowflake"] for a in aggregates} == {BIG, BIG + 1, BIG + 2}
    total = run(server, ids, {"calculations": query["calculations"]})["aggregates"][0]
    assert total["values"]["COUNT_DISTINCT(snowflake)"] == 3


def test_field_values_list_each_integer_as_sent(server: LiveServer, ids: Tenant) -> None:
    r = web.get(
        f"{server.url}/v1/datasets/ids/keys/id/values",
        headers={"Authorization": ids.admin_key},
        timeout=60,
    )
    assert r.status_code == 200, r.text
    listed = {v["value"]: v["count"] for v in r.json()["values"]}
    assert listed == {BIG: 1, BIG + 1: 1, BIG + 2: 1, MAX_U64: 1, 5: 2, -(BIG + 1): 1}
    tags = web.get(
        f"{server.url}/v1/datasets/ids/keys/tags/values",
        headers={"Authorization": ids.admin_key},
        timeout=60,
    ).json()["values"]
    assert {v["value"] for v in tags} == {BIG + 1, 7}


def test_integers_a_double_holds_are_listed_with_their_digits_and_found_again(
    server: LiveServer, ids: Tenant
) -> None:
    query = {"calculations": [{"operator": "COUNT"}], "group_bys": [{"key": "mixed"}],
             "filters": [{"key": "mixed", "operation": "EXISTS"}]}  # fmt: skip
    grouped = [a["groups"]["mixed"] for a in run(server, ids, query)["aggregates"]]
    listed = [
        v["value"]
        for v in web.get(
            f"{server.url}/v1/datasets/ids/keys/mixed/values",
            headers={"Authorization": ids.admin_key},
            timeout=60,
        ).json()["values"]
    ]
    for answer in (grouped, listed):
        # Compared by type too: 2**60 == 1.152921504606847e18 in Python.
        assert sorted((type(v).__name__, v) for v in answer) == [
            ("float", 1.5), ("int", 2**60), ("int", 2**63)
        ]  # fmt: skip
    for value in listed:  # click-to-filter sends back what was listed
        assert count(server, ids, {"key": "mixed", "operation": "=", "value": value}) == 1
