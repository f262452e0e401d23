"""The OpenAPI operations of the shipper formats (Elasticsearch bulk, Loki push, Splunk
HEC): catch-all routes FastAPI cannot see, written here and merged by ``openapi``."""

from __future__ import annotations

from typing import Any

Operation = dict[str, Any]

SECURITY_SCHEMES = {
    "shipperBasic": {
        "type": "http",
        "scheme": "basic",
        "description": "An ingest key (or admin key) as the password; any user name.",
    },
    "shipperBearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "An ingest key (or admin key) as the bearer token.",
    },
    "esApiKey": {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": "`ApiKey <key>`, or `ApiKey base64(<id>:<key>)` as Beats and Logstash "
        "write an Elasticsearch API key.",
    },
    "splunkToken": {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": "`Splunk <key>`: an ingest key (or admin key) as the HEC token.",
    },
}
ES_SECURITY: list[dict[str, list[str]]] = [
    {"shipperBasic": []},
    {"esApiKey": []},
    {"shipperBearer": []},
]

ES_ERROR = {
    "error": {
        "root_cause": [{"type": "security_exception", "reason": "Unauthorised"}],
        "type": "security_exception",
        "reason": "Unauthorised",
    },
    "status": 401,
}
BULK_ANSWER = {
    "took": 4,
    "errors": True,
    "items": [
        {"create": {"_index": "app", "_id": "1m8f...", "_version": 1, "result": "created",
                    "status": 201}},
        {"update": {"_index": "app", "_id": "7", "status": 400,
                    "error": {"type": "illegal_argument_exception",
                              "reason": "the update action is not supported: ..."}}},
    ],
}  # fmt: skip
BULK_BODY = (
    '{"create": {"_index": "app"}}\n{"@timestamp": "2026-11-27T12:00:00Z", "message": "hello"}\n'
)


def _es_json(description: str, example: Any) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"type": "object"}, "example": example}},
    }


ES_REFUSED = {
    "400": _es_json(
        "Not a bulk body (an action line that is not one, a missing document "
        "line); nothing is stored.",
        {**ES_ERROR, "status": 400},
    ),  # fmt: skip
    "401": _es_json("No key, or an unknown or revoked one.", ES_ERROR),
    "413": _es_json("Over 6MB uncompressed; Filebeat splits its batch.", ES_ERROR),
}


def _bulk(with_index: bool) -> Operation:
    parameters: list[dict[str, Any]] = [
        {"name": "filter_path", "in": "query", "schema": {"type": "string"},
         "description": "Elasticsearch's response filter, e.g. "
         "`errors,items.*.error,items.*.status`."},
    ]  # fmt: skip
    if with_index:
        parameters.insert(
            0,
            {"name": "index", "in": "path", "required": True, "schema": {"type": "string"},
             "description": "The index (dataset) of actions without `_index`."},
        )  # fmt: skip
    return {
        "tags": ["shippers"],
        "summary": "Elasticsearch bulk" + (" into an index" if with_index else ""),
        "description": "NDJSON action and document lines, any content type, gzip allowed. "
        "`index` and `create` store their document in the dataset the index names "
        "(characters other than letters, digits, `.`, `_`, `-` become `_`, cut to 128); "
        "`update` and `delete` are refused item by item. `@timestamp` or `timestamp` is "
        "the event's time. Answered 200 once authenticated and parsed, with one item per "
        "action (201, or 400 with `error`), after the stored documents are on disk.",
        "security": ES_SECURITY,
        "parameters": parameters,
        "requestBody": {
            "required": True,
            "content": {
                "application/x-ndjson": {"schema": {"type": "string"}, "example": BULK_BODY}
            },
        },  # fmt: skip
        "responses": {
            "200": _es_json("One item per action, in order.", BULK_ANSWER),
            **ES_REFUSED,
        },  # fmt: skip
    }


def _es_info(summary: str, example: Any, *path_names: str) -> Operation:
    return {
        "parameters": [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in path_names
        ],
        "tags": ["shippers"],
        "summary": summary,
        "description": "Answered so that Elasticsearch's shippers and clients send without "
        "special settings; every `/es` answer carries `X-Elastic-Product: Elasticsearch`.",
        "security": ES_SECURITY,
        "responses": {
            "200": _es_json("As Elasticsearch answers it.", example),
            "401": ES_REFUSED["401"],
        },  # fmt: skip
    }


ROOT_EXAMPLE = {"name": "limelight", "version": {"number": "8.17.0", "build_flavor": "default"},
                "tagline": "You Know, for Search"}  # fmt: skip

OPERATIONS: dict[tuple[str, str], Operation] = {
    ("/es/_bulk", "post"): _bulk(False),
    ("/es/{index}/_bulk", "post"): _bulk(True),
    ("/es/{index}/_doc", "post"): {
        **_bulk(True),
        "summary": "One Elasticsearch document",
        "description": "One JSON document into the index's dataset (rsyslog's "
        "omelasticsearch without bulk mode): 201 once on disk, 400 if it is not one.",
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"type": "object"}, "example": {"message": "hello"}}
            },
        },
        "responses": {
            "201": _es_json("Stored.", {"_index": "app", "_id": "1m8f...", "result": "created"}),
            **ES_REFUSED,
        },
    },  # fmt: skip
    ("/es", "get"): _es_info("Elasticsearch's root: the version clients check", ROOT_EXAMPLE),
    ("/es/_license", "get"): _es_info("An active licence", {"license": {"status": "active"}}),
    ("/es/_cluster/health", "get"): _es_info("Cluster health", {"status": "green"}),
    ("/es/_cat/health", "get"): _es_info("Cluster health as a row", "1764244800 limelight green 1"),
    ("/es/_index_template/{name}", "get"): _es_info(
        "Index templates: already in place (Filebeat's and Logstash's set-up has nothing to do)",
        {"index_templates": [{"name": "filebeat-8.17.0", "index_template": {}}]},
        "name",
    ),
    ("/es/_ilm/policy/{name}", "get"): _es_info(
        "Lifecycle policies: already in place (retention is Limelight's own)",
        {"filebeat": {"policy": {"phases": {}}}},
        "name",
    ),
}


LOKI_PUSH = {"streams": [{"stream": {"service_name": "api", "dataset": "logs"},
                          "values": [["1764244800000000000", "GET /cart 200",
                                      {"trace_id": "5b8e..."}]]}]}  # fmt: skip


def _text(description: str, example: str) -> dict[str, Any]:
    content = {"text/plain": {"schema": {"type": "string"}, "example": example}}
    return {"description": description, "content": content}


OPERATIONS[("/loki/api/v1/push", "post")] = {
    "tags": ["shippers"],
    "summary": "Loki push",
    "description": "`application/json` (`{\"streams\": [{\"stream\", \"values\"}]}`, or the "
    "form before Loki 0.4), or `logproto.PushRequest` protobuf compressed with snappy (any "
    "other content type). Each line is an event with its labels and structured metadata as "
    "keys and its time; a line that is a JSON object is the event. The dataset is "
    "`x-dataset`, else the stream's `dataset` label, else `logs`; the service is the label "
    "`service_name`, else `service`, else `job`.",
    "security": [{"shipperBasic": []}, {"shipperBearer": []}],
    "parameters": [{"name": "x-dataset", "in": "header", "schema": {"type": "string"}}],
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": {"type": "object"}, "example": LOKI_PUSH},
            "application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
        },
    },
    "responses": {
        "204": {"description": "Every entry is on disk."},
        "400": _text("The body cannot be decoded (nothing stored), or some entries were "
                     "refused (the others stored).",
                     "1 of 3 entries refused; entry 1: the event is 300014 bytes; ..."),
        "401": _text("No key, or an unknown or revoked one.", "Unauthorised"),
        "413": _text("Over 6MB uncompressed (snappy's declared length is checked first).",
                     "the request body is over 6291456 bytes uncompressed"),
    },
}  # fmt: skip


HEC_SECURITY: list[dict[str, list[str]]] = [
    {"splunkToken": []},
    {"shipperBasic": []},
    {"shipperBearer": []},
]
HEC_SUCCESS = {"text": "Success", "code": 0}


def _hec(summary: str, description: str, content_type: str, example: Any) -> Operation:
    return {
        "tags": ["shippers"],
        "summary": summary,
        "description": description,
        "security": HEC_SECURITY,
        "parameters": [
            {
                "name": "x-dataset",
                "in": "header",
                "schema": {"type": "string"},
                "description": "The dataset of events without an index (`logs`).",
            }
        ],
        "requestBody": {
            "required": True,
            "content": {content_type: {"schema": {"type": "string"}, "example": example}},
        },
        "responses": {
            "200": _es_json("Every event is on disk.", HEC_SUCCESS),
            "400": _es_json(
                "No data (5), invalid data format (6), incorrect index (7), event "
                "field required (12) or blank (13): for a refused event, the "
                "others of the request are stored and `invalid-event-number` "
                "names the first refused.",
                {"text": "Incorrect index", "code": 7, "invalid-event-number": 1},
            ),
            "401": _es_json(
                "Token is required (2), invalid authorization (3).",
                {"text": "Token is required", "code": 2},
            ),
            "403": _es_json("Invalid token (4).", {"text": "Invalid token", "code": 4}),
        },
    }


HEC_EVENT = _hec(
    "Splunk HEC events",
    "JSON objects one after another (or one a line), gzip allowed: `event` is the event (an "
    "object as it is, anything else as `message`), `time` (epoch seconds) its time, `host`, "
    "`source`, `sourcetype` and `fields` its keys, `index` its dataset.",
    "application/json",
    '{"event": {"action": "login"}, "time": 1764244800.5, "index": "app"}'
    '{"event": "plain text", "fields": {"region": "eu"}}',
)
OPERATIONS[("/services/collector", "post")] = HEC_EVENT
OPERATIONS[("/services/collector/event", "post")] = HEC_EVENT
OPERATIONS[("/services/collector/raw", "post")] = {
    **_hec(
        "Splunk HEC raw lines",
        "One event a line (a line that is a JSON object keeps its fields); the query's "
        "`index`, `host`, `source` and `sourcetype` apply to every line.",
        "text/plain",
        "GET /cart 200\nGET /pay 500\n",
    ),
}
OPERATIONS[("/services/collector/health", "get")] = {
    "tags": ["shippers"],
    "summary": "Splunk HEC health",
    "description": "Healthy; a token sent along is checked (400, code 4, when unknown). "
    "`/services/collector/health/1.0` answers alike.",
    "responses": {
        "200": _es_json("Healthy.", {"text": "HEC is healthy", "code": 17}),
        "400": _es_json("The token sent is unknown.", {"text": "Invalid token", "code": 4}),
    },
}  # fmt: skip
