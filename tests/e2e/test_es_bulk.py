"""Elasticsearch's bulk API at /es: the official Python client (``helpers.bulk``,
``streaming_bulk``) unmodified but for the URL and the key, and the requests the other
shippers make (their content types, gzip, ``filter_path``, the checks before a bulk)."""

from __future__ import annotations

import base64
import gzip
import time
from typing import Any

import orjson
import pytest
from elasticsearch import Elasticsearch, helpers

from tests import web
from tests.e2e.shipper_support import stored
from tests.support import LiveServer, Tenant

NOW_S = int(time.time())


@pytest.fixture(scope="module")
def tenant(server: LiveServer) -> Tenant:
    return server.new_tenant()


def iso(epoch_s: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch_s))


def client(server: LiveServer, key: str) -> Elasticsearch:
    return Elasticsearch(f"{server.url}/es", basic_auth=("elastic", key), request_timeout=30)


def ndjson(*lines: Any) -> bytes:
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def bulk(server: LiveServer, key: str, body: bytes, path: str = "/es/_bulk", **kw: Any) -> Any:
    headers = {"Authorization": f"ApiKey {key}", **kw.pop("headers", {})}
    return web.post(f"{server.url}{path}", content=body, headers=headers, timeout=30, **kw)


def test_helpers_bulk_stores_each_document_in_its_index_with_its_time(
    server: LiveServer, tenant: Tenant
) -> None:
    es = client(server, tenant.ingest_key)
    assert es.info()["version"]["number"].startswith("8.")
    actions: list[dict[str, Any]] = [
        {
            "_index": "es-app",
            "_source": {"@timestamp": iso(NOW_S - 60 * i) + ".250Z", "message": f"request {i}",
                        "http": {"status": 200 + i}},
        }
        for i in range(40)
    ]  # fmt: skip
    # The others to a second index, with the legacy _type (ignored) and their time as ms.
    audit = [{"timestamp": (NOW_S - 5) * 1000, "user": "u-1"},
             {"timestamp": (NOW_S - 6) * 1000, "user": "u-2"}]  # fmt: skip
    actions += [
        {"_index": "es-audit", "_type": "_doc", "_source": audit[0]},
        {"_op_type": "create", "_index": "es-audit", "_source": audit[1]},
    ]
    ok, errors = helpers.bulk(es, actions)
    assert (ok, errors) == (42, [])

    app = stored(server, tenant, "es-app")
    assert len(app) == 40
    newest = app[0]
    assert newest["message"] == "request 0" and newest["http"] == {"status": 200}
    assert newest["_timestamp"] == NOW_S * 1000 + 250
    assert newest["_dataset"] == "es-app"
    assert [e["_timestamp"] for e in app] == [(NOW_S - 60 * i) * 1000 + 250 for i in range(40)]
    audit = stored(server, tenant, "es-audit")
    assert [(e["user"], e["_timestamp"]) for e in audit] == [
        ("u-1", (NOW_S - 5) * 1000),
        ("u-2", (NOW_S - 6) * 1000),
    ]
    assert "_type" not in audit[0]


def test_streaming_bulk_reports_update_and_delete_refused_and_stores_the_rest(
    server: LiveServer, tenant: Tenant
) -> None:
    es = client(server, tenant.ingest_key)
    actions = [
        {"_index": "es-mixed", "_id": "a1", "_source": {"n": 1}},
        {"_op_type": "update", "_index": "es-mixed", "_id": "a1", "doc": {"n": 2}},
        {"_op_type": "delete", "_index": "es-mixed", "_id": "a1"},
        {"_op_type": "create", "_index": "es-mixed", "_id": "a2", "_source": {"n": 3}},
    ]
    results = list(helpers.streaming_bulk(es, actions, raise_on_error=False, max_retries=0))
    outcome = [(ok, next(iter(item)), item[next(iter(item))]["status"]) for ok, item in results]
    assert outcome == [
        (True, "index", 201),
        (False, "update", 400),
        (False, "delete", 400),
        (True, "create", 201),
    ]
    refused = results[1][1]["update"]
    assert refused["error"]["type"] == "illegal_argument_exception"
    assert "update" in refused["error"]["reason"]
    assert results[0][1]["index"]["_id"] == "a1"
    assert sorted(e["n"] for e in stored(server, tenant, "es-mixed")) == [1, 3]
    # With the default raise_on_error, the client raises naming the refused items only.
    with pytest.raises(helpers.BulkIndexError) as raised:
        helpers.bulk(es, actions[1:3])
    assert len(raised.value.errors) == 2


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json; charset=UTF-8",  # Filebeat
        "application/json",  # Logstash
        "application/x-ndjson",  # Fluent Bit, Vector, syslog-ng
        "application/vnd.elasticsearch+x-ndjson; compatible-with=9",  # the Python client
        None,
    ],
)
def test_every_content_type_the_shippers_send_is_taken(
    server: LiveServer, tenant: Tenant, content_type: str | None
) -> None:
    dataset = f"es-ct-{abs(hash(content_type)) % 10_000}"
    body = ndjson({"create": {}}, {"message": "one", "@timestamp": NOW_S * 1000})
    headers = {"Content-Type": content_type} if content_type else {}
    answer = bulk(server, tenant.ingest_key, body, f"/es/{dataset}/_bulk", headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-elastic-product"] == "Elasticsearch"
    assert answer.json()["errors"] is False
    assert [e["message"] for e in stored(server, tenant, dataset)] == ["one"]


def test_a_gzip_body_with_filebeats_filter_path_gets_only_what_it_asked_for(
    server: LiveServer, tenant: Tenant
) -> None:
    body = ndjson(
        {"index": {"_index": "es-gzip"}}, {"message": "kept"},
        {"index": {"_index": "es-gzip"}}, "not an object",
        {"delete": {"_index": "es-gzip", "_id": "x"}},
    )  # fmt: skip
    answer = bulk(
        server, tenant.ingest_key, gzip.compress(body),
        params={"filter_path": "errors,items.*.error,items.*.status"},
        headers={"Content-Encoding": "gzip", "Content-Type": "application/json; charset=UTF-8"},
    )  # fmt: skip
    assert answer.status_code == 200
    got = answer.json()
    assert got["errors"] is True
    assert [list(i.values())[0]["status"] for i in got["items"]] == [201, 400, 400]
    assert set(got) == {"errors", "items"}
    assert got["items"][0] == {"index": {"status": 201}}
    assert got["items"][1]["index"]["error"]["type"] == "document_parsing_exception"
    assert [e["message"] for e in stored(server, tenant, "es-gzip")] == ["kept"]


def test_a_filter_path_of_more_paths_than_shippers_name_is_refused_before_anything_is_stored(
    server: LiveServer, tenant: Tenant
) -> None:
    """Each path costs a pass over the answer's items: 2,000 paths over 10,000 actions
    held a core 15 s for one request."""
    body = ndjson({"index": {"_index": "es-paths"}}, {"message": "sent"})
    many = ",".join(["items.*.status"] + [f"items.*.x{i}" for i in range(64)])
    answer = bulk(server, tenant.ingest_key, body, params={"filter_path": many})
    assert answer.status_code == 400
    assert answer.json()["error"]["reason"] == "filter_path may name at most 64 paths"
    fewer = many.rsplit(",", 1)[0]
    answer = bulk(server, tenant.ingest_key, body, params={"filter_path": fewer})
    assert answer.json() == {"items": [{"index": {"status": 201}}]}
    assert [e["message"] for e in stored(server, tenant, "es-paths")] == ["sent"]


def test_index_names_map_to_datasets_by_the_documented_rule(
    server: LiveServer, tenant: Tenant
) -> None:
    body = ndjson(
        {"index": {"_index": "logstash-2026.11.27"}}, {"n": 1},
        {"index": {"_index": "app:logs/ü"}}, {"n": 2},
        {"index": {"_index": ".."}}, {"n": 3},
        {"index": {}}, {"n": 4},
    )  # fmt: skip
    got = bulk(server, tenant.ingest_key, body).json()
    statuses = [(i["index"]["_index"], i["index"]["status"]) for i in got["items"]]
    assert statuses == [("logstash-2026.11.27", 201), ("app:logs/ü", 201), ("..", 400),
                        (None, 400)]  # fmt: skip
    assert got["items"][3]["index"]["error"]["reason"] == "index is missing"
    assert [e["n"] for e in stored(server, tenant, "logstash-2026.11.27")] == [1]
    assert [e["n"] for e in stored(server, tenant, "app_logs__")] == [2]


def test_a_document_nested_too_deep_is_refused_alone(server: LiveServer, tenant: Tenant) -> None:
    deep: Any = "bottom"
    for _ in range(200):
        deep = {"a": deep}
    body = ndjson({"index": {}}, {"n": 1}, {"index": {}})
    body += b'{"a":' * 2000 + b"1" + b"}" * 2000 + b"\n"
    body += ndjson({"index": {}}, deep, {"index": {}}, {"n": 2})
    got = bulk(server, tenant.ingest_key, body, "/es/es-deep/_bulk").json()
    assert [i["index"]["status"] for i in got["items"]] == [201, 400, 400, 201]
    assert "nests" in got["items"][1]["index"]["error"]["reason"]
    assert sorted(e["n"] for e in stored(server, tenant, "es-deep")) == [1, 2]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "request body is required"),
        (b"not json\n{}\n", "Malformed action/metadata line [1]"),
        (b'{"upsert": {}}\n{}\n', "but found [upsert]"),
        (b'{"index": {}}\n', "has no document line"),
        (b'{"index": {}, "create": {}}\n{}\n', "Malformed action/metadata line [1]"),
    ],
)
def test_a_body_that_is_not_bulk_gets_elasticsearchs_400_and_stores_nothing(
    server: LiveServer, tenant: Tenant, body: bytes, reason: str
) -> None:
    answer = bulk(server, tenant.ingest_key, body, "/es/es-malformed/_bulk")
    assert answer.status_code == 400
    error = answer.json()
    assert error["status"] == 400 and reason in error["error"]["reason"]
    assert error["error"]["type"] == "illegal_argument_exception"
    assert answer.headers["x-elastic-product"] == "Elasticsearch"


def test_the_key_is_taken_from_basic_apikey_and_bearer_and_nothing_else_passes(
    server: LiveServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    key = tenant.ingest_key
    ways = {
        "basic": "Basic " + base64.b64encode(f"anyone:{key}".encode()).decode(),
        "apikey": f"ApiKey {key}",
        "apikey-id-key": "ApiKey " + base64.b64encode(f"some-id:{key}".encode()).decode(),
        "bearer": f"Bearer {key}",
    }
    for way, header in ways.items():
        body = ndjson({"create": {}}, {"way": way})
        answer = bulk(server, key, body, "/es/es-auth/_bulk", headers={"Authorization": header})
        assert answer.status_code == 200, (way, answer.text)
    assert sorted(e["way"] for e in stored(server, tenant, "es-auth")) == sorted(ways)
    # The other tenant's key stores in the other tenant only.
    body = ndjson({"create": {}}, {"way": "other"})
    assert bulk(server, other_tenant.ingest_key, body, "/es/es-auth/_bulk").status_code == 200
    assert len(stored(server, tenant, "es-auth")) == len(ways)
    assert [e["way"] for e in stored(server, other_tenant, "es-auth")] == ["other"]

    refused = {
        "none": {},
        "unknown": {"Authorization": "ApiKey ll_pk_unknown"},
        "bad-basic": {"Authorization": "Basic not-base64!"},
        "a token": {"Authorization": "Bearer ll_at_whatever"},
    }
    for way, headers in refused.items():
        answer = web.request(
            "POST", f"{server.url}/es/_bulk", content=ndjson({"create": {}}, {}), headers=headers
        )
        assert answer.status_code == 401, way
        assert answer.json()["error"]["type"] == "security_exception"
        assert answer.headers["x-elastic-product"] == "Elasticsearch"
        assert "Basic" in answer.headers["www-authenticate"]
        # The informational answers need a key too.
        assert web.request("GET", f"{server.url}/es/", headers=headers).status_code == 401


def test_what_shippers_ask_before_a_bulk_is_answered(server: LiveServer, tenant: Tenant) -> None:
    headers = {"Authorization": f"ApiKey {tenant.ingest_key}"}

    def call(method: str, path: str, **kw: Any) -> Any:
        answer = web.request(method, f"{server.url}/es{path}", headers=headers, **kw)
        assert answer.headers["x-elastic-product"] == "Elasticsearch", path
        return answer

    root = call("GET", "/")
    assert root.status_code == 200
    assert int(root.json()["version"]["number"].split(".")[0]) >= 8
    assert root.json()["tagline"] == "You Know, for Search"
    assert call("HEAD", "/").status_code == 200
    assert call("HEAD", "").status_code == 200
    assert (
        call("GET", "/_license", params={"human": "false"}).json()["license"]["status"] == "active"
    )
    assert call("GET", "/_cluster/health").json()["status"] == "green"
    assert call("GET", "/_cat/health").status_code == 200
    assert call("GET", "/_cat/health", params={"format": "json"}).json()[0]["status"] == "green"
    # Filebeat's and Logstash's template and lifecycle checks: already in place.
    assert call("HEAD", "/_index_template/filebeat-8.17.0").status_code == 200
    assert call("HEAD", "/_template/logstash").status_code == 200
    assert call("GET", "/_ilm/policy/filebeat").json()["filebeat"]["policy"] == {"phases": {}}
    put = call("PUT", "/_index_template/filebeat-8.17.0", json={"index_patterns": ["x"]})
    assert put.json() == {"acknowledged": True}
    # The JavaScript client's bulk helper refreshes the index once done: already visible.
    assert call("POST", "/app/_refresh").json()["_shards"]["failed"] == 0
    assert call("GET", "/_search").status_code == 404
    assert call("GET", "/_bulk").status_code == 405


def test_one_document_at_index_doc_as_rsyslog_sends_without_bulk_mode(
    server: LiveServer, tenant: Tenant
) -> None:
    headers = {"Authorization": f"Bearer {tenant.ingest_key}"}
    answer = web.post(f"{server.url}/es/es-one/_doc", json={"msg": "single"}, headers=headers)
    assert answer.status_code == 201
    assert answer.json()["result"] == "created"
    refused = web.post(f"{server.url}/es/es-one/_doc", content=b"[1]", headers=headers)
    assert refused.status_code == 400
    assert refused.json()["error"]["type"] == "document_parsing_exception"
    assert [e["msg"] for e in stored(server, tenant, "es-one")] == ["single"]


def test_secret_looking_keys_are_redacted_as_the_events_api_redacts(
    server: LiveServer, tenant: Tenant
) -> None:
    body = ndjson({"create": {}}, {"user": "u-1", "password": "hunter2", "auth": {"token": "t"}})
    assert bulk(server, tenant.ingest_key, body, "/es/es-secrets/_bulk").status_code == 200
    (event,) = stored(server, tenant, "es-secrets")
    assert event["password"] == "[REDACTED]" and event["auth"] == {"token": "[REDACTED]"}
    assert event["user"] == "u-1"
