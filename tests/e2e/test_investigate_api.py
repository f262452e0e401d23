"""Field values and BubbleUp against a real server: answers, 400s naming the field, keys,
and tenants: another workspace's events, and another environment's of the same workspace,
are never seen."""

from __future__ import annotations

import json
import random
import time
from typing import Any
from urllib.parse import quote

import httpx

from limelight.auth.api_keys import mint_key
from limelight.auth.key_owners import admin_key_owner
from limelight.store.meta import repos
from tests import web
from tests.support import LiveServer, Tenant

HOUR = 3_600_000


def sibling(server: LiveServer, tenant: Tenant) -> Tenant:
    """A second environment of ``tenant``'s workspace, with its own keys."""
    with server.meta.session(immediate=True) as s:
        ws = repos.find_workspace(s, tenant.workspace_id)
        env = repos.create_environment(s, ws, f"staging-{time.time_ns()}", redact=True)
        owner = admin_key_owner(s, ws, None)
        ingest = mint_key(s, env, "ingest").value
        admin = mint_key(s, env, "admin", user_id=owner.id).value
        return Tenant(ws.id, env.id, ingest, admin, owner.id)


def values(server: LiveServer, key: str | None, dataset: str, name: str, **params: Any) -> Any:
    headers = {"Authorization": key} if key else {}
    url = f"{server.url}/v1/datasets/{dataset}/keys/{name}/values"
    return web.get(url, params=params, headers=headers, timeout=60)


def bubble_up(server: LiveServer, key: str | None, body: Any) -> httpx.Response:
    headers = {"Authorization": key} if key else {}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return web.post(f"{server.url}/v1/bubble_up", content=content, headers=headers, timeout=60)


def _fields(answer: httpx.Response) -> list[str]:
    assert answer.status_code == 400, answer.text
    return [e["field"] for e in answer.json()["errors"]]


def test_a_keys_values_are_counted_over_the_timeframe_and_filters(
    server: LiveServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    now = int(time.time() * 1000)
    events = [
        {"timestamp": now - 1000 - i, "status": s, "duration": d, "tags": t}
        for i, (s, d, t) in enumerate(
            [(200, 5, ["a"]), (200, 50, ["a", "b"]), (500, 500, []), ("200", 7, ["b"])]
        )
    ]
    events.append({"timestamp": now - 30 * HOUR, "status": 404})  # before the default day
    assert server.send(tenant.ingest_key, "api", events, {"x-service": "gw"}).status_code == 202
    theirs = [{"status": 418, "tags": ["theirs"]}]
    neighbour = sibling(server, tenant)
    for who in (other_tenant, neighbour):
        assert server.send(who.ingest_key, "api", theirs).status_code == 202

    answer = values(server, tenant.admin_key, "api", "status")
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "key": "status",
        "values": [
            {"value": 200, "count": 2, "share": 0.5},
            {"value": 500, "count": 1, "share": 0.25},  # ties: numbers, then strings
            {"value": "200", "count": 1, "share": 0.25},
        ],
        "distinct": 3,
        "events": 4,
        "sampled": False,
    }
    slow = json.dumps([{"key": "duration", "operation": ">", "value": 10}])
    filtered = values(server, tenant.admin_key, "api", "tags", filters=slow, limit=1).json()
    # The event of 500 ms holds an empty array: no value, not counted.
    assert filtered["values"] == [{"value": "a", "count": 1, "share": 1.0}]
    assert (filtered["distinct"], filtered["events"]) == (2, 1)
    wider = values(server, tenant.admin_key, "api", "status", **{"from": now - 31 * HOUR})
    assert {"value": 404, "count": 1, "share": 0.2} in wider.json()["values"]
    service = values(server, tenant.admin_key, "api", "_service").json()
    assert service["values"] == [{"value": "gw", "count": 4, "share": 1.0}]
    # The other workspace and the other environment of the same workspace each see theirs.
    for who in (other_tenant, neighbour):
        mine = values(server, who.admin_key, "api", "status").json()
        assert mine["values"] == [{"value": 418, "count": 1, "share": 1.0}]


def test_the_values_api_answers_as_the_queries_api_does(
    server: LiveServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    assert server.send(tenant.ingest_key, "api", [{"status": 200}]).status_code == 202
    assert server.send(other_tenant.ingest_key, "private", [{"status": 1}]).status_code == 202
    assert values(server, None, "api", "status").status_code == 401
    assert values(server, "ll_sk_" + "0" * 43, "api", "status").status_code == 401
    refused = values(server, tenant.ingest_key, "api", "status")
    assert refused.status_code == 403 and "admin key" in refused.json()["reason"]

    admin = tenant.admin_key
    assert _fields(values(server, admin, "api", "status", limit=0)) == ["limit"]
    assert _fields(values(server, admin, "api", "status", limit=101)) == ["limit"]
    assert _fields(values(server, admin, "api", "status", **{"from": "soon"})) == ["from"]
    assert _fields(values(server, admin, "api", "status", **{"from": 10, "to": 5})) == ["from"]
    assert _fields(values(server, admin, "api", "a..b")) == ["key"]
    assert _fields(values(server, admin, "api", "status", filters="[{")) == ["filters"]
    assert _fields(values(server, admin, "api", "status", filters='{"key": 1}')) == ["filters"]
    # Were a 500 (the standard library's parser passed the recursion limit) and a 503 (a
    # lone surrogate the engine failed to bind).
    assert _fields(values(server, admin, "api", "status", filters="[" * 3000)) == ["filters"]
    surrogate = '[{"key": "status", "operation": "=", "value": "\\ud800"}]'
    assert _fields(values(server, admin, "api", "status", filters=surrogate)) == ["filters"]
    bad_op = json.dumps([{"key": "status", "operation": "~", "value": 1}])
    assert _fields(values(server, admin, "api", "status", filters=bad_op)) == [
        "filters[0].operation"
    ]
    bad_name = values(server, admin, "no%20spaces", "status")
    assert bad_name.status_code == 400 and "invalid dataset name" in bad_name.json()["reason"]
    # Another environment's dataset is as unknown as one that never was.
    for name in ("private", "never-sent"):
        assert values(server, admin, name, "status").status_code == 404
    # A key that no event holds is no error: it has no values.
    none = values(server, admin, "api", "nowhere/at all").json()
    assert (none["values"], none["events"]) == ([], 0)


def _requests(count: int, seed: int, now: int) -> list[dict[str, Any]]:
    """Slow requests are those of eu-west-2 on the free plan (3 in 100)."""
    rnd = random.Random(seed)
    out = []
    for i in range(count):
        slow = i % 100 < 3
        region = "eu-west-2" if slow else rnd.choice(["eu-west-1", "eu-west-2", "us-east-1"])
        plan = "free" if slow else rnd.choice(["pro", "team"] if region == "eu-west-2" else
                                              ["free", "pro", "team"])  # fmt: skip
        event = {
            "timestamp": now - rnd.randrange(HOUR),
            "region": region,
            "plan": plan,
            "duration": 2000 + i if slow else rnd.randrange(10, 900),
        }
        event.update({f"noise{j}": rnd.choice(["x", "y", "z"]) for j in range(5)})
        out.append(event)
    return out


def test_bubble_up_ranks_what_sets_the_selection_apart(server: LiveServer, tenant: Tenant) -> None:
    now = int(time.time() * 1000)
    events = _requests(3000, seed=2, now=now)
    assert server.send(tenant.ingest_key, "requests", events).status_code == 202
    # The same keys in another dataset and another environment of the workspace, all slow.
    decoys = [{**e, "region": "decoy", "duration": 5000} for e in events[:500]]
    assert server.send(tenant.ingest_key, "other", decoys).status_code == 202
    assert server.send(sibling(server, tenant).ingest_key, "requests", decoys).status_code == 202

    body = {
        "namespaces": [{"type": "dataset", "value": "requests"}],
        "from": now - HOUR,
        "to": now + 1,
        "selection": {"filters": [{"key": "duration", "operation": ">=", "value": 2000}]},
    }
    answer = bubble_up(server, tenant.admin_key, body)
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert (found["selection"], found["baseline"], found["sampled"]) == (90, 2910, False)
    # free is a third of the plans, eu-west-2 a third of the regions (2/9 and 1/3 of the
    # baseline): plan first, 0.78 against 0.67.
    assert [d["key"] for d in found["dimensions"][:2]] == ["plan", "region"]
    plan, region = found["dimensions"][:2]
    assert region["values"][0] == {
        "value": "eu-west-2",
        "selection": 1.0,
        "baseline": sum(e["region"] == "eu-west-2" for e in events if e["duration"] < 2000) / 2910,
    }
    assert max(plan["values"], key=lambda v: v["selection"])["value"] == "free"
    assert "decoy" not in json.dumps(found)
    assert "duration" not in [d["key"] for d in found["dimensions"]]

    # A region of the heatmap: the slow requests' durations over the whole hour.
    region_body = {
        **body,
        "selection": {"from": now - HOUR, "to": now + 1, "key": "duration", "min": 2000,
                      "max": 1e9},
    }  # fmt: skip
    by_region = bubble_up(server, tenant.admin_key, region_body).json()
    assert (by_region["selection"], by_region["baseline"]) == (90, 2910)
    assert [d["key"] for d in by_region["dimensions"][:2]] == ["plan", "region"]


def test_the_bubble_up_api_answers_as_the_queries_api_does(
    server: LiveServer, tenant: Tenant
) -> None:
    now = int(time.time() * 1000)
    good = {"from": now - HOUR, "to": now, "selection": {"filters": [
        {"key": "duration", "operation": ">", "value": 1}]}}  # fmt: skip
    assert bubble_up(server, None, good).status_code == 401
    assert bubble_up(server, tenant.ingest_key, good).status_code == 403
    assert bubble_up(server, tenant.admin_key, good).status_code == 200

    admin = tenant.admin_key
    cases: list[tuple[Any, list[str]]] = [
        ({**good, "selection": None}, ["selection"]),
        ({k: v for k, v in good.items() if k != "selection"}, ["selection"]),
        ({**good, "from": "yesterday"}, ["from"]),
        ({**good, "from": now, "to": now - HOUR}, ["from"]),
        ({**good, "bogus": 1}, ["bogus"]),
        ({**good, "filters": [{"key": "a", "operation": "~"}]}, ["filters[0].operation"]),
        ({**good, "needle": {"value": ""}}, ["needle.value"]),
        ({**good, "selection": {}}, ["selection"]),
        ({**good, "selection": {"filters": []}}, ["selection.filters"]),
        (
            {**good, "selection": {"filters": [{"key": "a", "operation": "~"}]}},
            ["selection.filters[0].operation"],
        ),
        ({**good, "selection": {"filters": [{"key": "a", "operation": "EXISTS"}], "x": 1}},
         ["selection.x"]),
        ({**good, "selection": {"from": 1, "to": 2, "key": "d", "min": 5, "max": 1}},
         ["selection.min"]),
        ({**good, "selection": {"from": 2, "to": 1, "key": "d", "min": 1, "max": 5}},
         ["selection.from"]),
        ({**good, "selection": {"from": 1, "to": 2, "key": "d", "min": "a", "max": 5}},
         ["selection.min"]),
        ({**good, "selection": {"from": 1, "to": 2, "min": 1, "max": 5}}, ["selection.key"]),
        ({**good, "selection": {"from": 1, "to": 2, "key": "..", "min": 1, "max": 5}},
         ["selection.key"]),
    ]  # fmt: skip
    for body, fields in cases:
        assert _fields(bubble_up(server, admin, body)) == fields, body
    assert _fields(bubble_up(server, admin, b"{not json")) != []
    too_long = {**good, "from": 0, "to": 40 * 24 * HOUR}
    assert _fields(bubble_up(server, admin, too_long)) == ["to"]
    regex = {**good, "selection": {"filters": [{"key": "m", "operation": "MATCH_REGEX",
                                                "value": "("}]}}  # fmt: skip
    event = {"timestamp": now - 1000, "m": "x", "duration": 3}
    assert server.send(tenant.ingest_key, "api", [event]).status_code == 202
    assert _fields(bubble_up(server, admin, regex)) == ["selection.filters[0].value"]


def test_the_values_of_a_key_with_any_characters(server: LiveServer) -> None:
    """A line feed, a slash, a percent sign or a question mark is legal in a JSON key."""
    tenant = server.new_tenant()
    keys = ["two\nlines", "a/b", "100%", "why?", "tab\there"]
    assert server.send(tenant.ingest_key, "odd", [dict.fromkeys(keys, "v")]).status_code == 202
    for key in keys:
        answer = values(server, tenant.admin_key, "odd", quote(key, safe=""))
        assert answer.status_code == 200, (key, answer.text)
        assert answer.json()["values"] == [{"value": "v", "count": 1, "share": 1.0}], key
