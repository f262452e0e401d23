"""What the OpenAPI docs of every route share: the security schemes, the error answers,
the helpers that write a body or an answer with its example, and the few operations
whose routes live outside ``api/``.

Each operation is documented beside its route: a typed route on its decorator
(``summary``, ``description``, ``responses``, and ``openapi_extra`` for who may call and
the body it reads itself), a catch-all route (the Events API, OTLP, OAuth, the shippers'
formats, which FastAPI cannot see) in its module's ``OPERATIONS``. ``openapi_document``
puts them together.
"""

from __future__ import annotations

from typing import Any

Operation = dict[str, Any]
# The type FastAPI's ``responses=`` takes, so that these dicts can be passed to it as they are.
Answers = dict[int | str, dict[str, Any]]
Security = list[dict[str, list[str]]]

DESCRIPTION = """\
Limelight's HTTP API: send events (the Events API and OTLP/HTTP), save and run
queries, watch them with alerts, browse datasets, and let third-party
applications in through OAuth. Each API lives at its base address
(`events_url`, `queries_url`, `auth_url`, `otel_url`, all under
`LIMELIGHT_PUBLIC_URL`); on one server they are the paths below.

Errors are `{"message": <status title>, "reason"?: <why>, "errors"?: [{"field",
"message"}]}`; an unexpected fault is a 500 with no detail.
"""

SECURITY_SCHEMES = {
    "adminKey": {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": "An admin key (`ll_sk_...`), bare or as `Bearer <key>`; "
        "`x-api-key` works too. An ingest key is refused with 403.",
    },
    "ingestKey": {
        "type": "apiKey",
        "in": "header",
        "name": "x-api-key",
        "description": "An ingest key (`ll_pk_...`) or an admin key of the environment.",
    },
    "accessToken": {
        "type": "http",
        "scheme": "bearer",
        "description": "An OAuth access token (`ll_at_...`) from `/oauth/token`.",
    },
    # The shippers' formats (Elasticsearch bulk, Loki push, Splunk HEC) take the key as
    # each shipper sends it.
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
ADMIN: Security = [{"adminKey": []}]
INGEST: Security = [{"ingestKey": []}]

ERROR = {"$ref": "#/components/schemas/Error"}
ERROR_SCHEMA = {
    "type": "object",
    "required": ["message"],
    "properties": {
        "message": {"type": "string", "description": "The status's title."},
        "reason": {"type": "string", "description": "Why, when it can be said."},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
            },
        },
    },
}


def json_content(example: Any, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"application/json": {"schema": schema or {"type": "object"}, "example": example}}


def answer(description: str, example: Any) -> dict[str, Any]:
    """An answer whose JSON body is ``example``."""
    return {"description": description, "content": json_content(example)}


def ok(description: str, example: Any, status: str = "200") -> Answers:
    return {status: answer(description, example)}


def error(description: str, example: Any | None = None) -> dict[str, Any]:
    """An error answer in the API's one error shape (``Error``)."""
    content: dict[str, Any] = {"application/json": {"schema": ERROR}}
    if example is not None:
        content["application/json"]["example"] = example
    return {"description": description, "content": content}


def body(schema: str | dict[str, Any], example: Any) -> dict[str, Any]:
    """A JSON request body: ``schema`` a component's name or a schema."""
    if isinstance(schema, str):
        schema = {"$ref": f"#/components/schemas/{schema}"}
    return {"required": True, "content": json_content(example, schema)}


def admin_only(request_body: dict[str, Any] | None = None) -> Operation:
    """A typed route's ``openapi_extra``: it needs an admin key, and reads ``request_body``
    itself (FastAPI sees no body parameter)."""
    extra: Operation = {"security": ADMIN}
    if request_body is not None:
        extra["requestBody"] = request_body
    return extra


KEYED: Answers = {
    "400": error("A bad field, named in `errors`."),
    "401": error("No key, or an unknown or revoked one.", {"message": "Unauthorised"}),
    "403": error("An ingest key: this needs an admin key."),
}
FOUND: Answers = {
    **KEYED,
    "404": error("Not in the key's environment (another's is as unknown)."),
}
MANAGED_ID_TAKEN = error("`managed_id` already names another resource of its type here.")

AUTHORIZE_PARAMETERS = (
    ("response_type", "`code`"),
    ("client_id", "the Client ID (`clientId` is accepted too)"),
    ("redirect_uri", "optional; exactly the registered redirect URL"),
    ("state", "a random value the integration keeps and checks on return"),
    ("code_challenge", "optional PKCE (RFC 7636)"),
    ("code_challenge_method", "`S256` only"),
)

# Two operations whose routes live above ``api/`` (the app's health check, the console's
# consent page), out of reach of the document built here: their docs wait here.
HEALTH: dict[tuple[str, str], Operation] = {
    ("/health", "get"): {
        "tags": ["operations"],
        "summary": "Is the server up",
        "description": "For load balancers and orchestrators; needs no key.",
        "responses": ok("Serving.", {"status": "ok"}),
    },
}
AUTHORIZE: dict[tuple[str, str], Operation] = {
    ("/oauth/authorize", "get"): {
        "tags": ["oauth"],
        "summary": "The consent page an integration sends a developer to",
        "description": "A page for a person (sign in, pick environments, allow), then a "
        "303 to the integration's redirect URL with `code` and `state`.",
        "parameters": [
            {
                "name": name,
                "in": "query",
                "required": name in ("response_type", "client_id"),
                "schema": {"type": "string"},
                "description": about,
            }
            for name, about in AUTHORIZE_PARAMETERS
        ],
        "responses": {"200": {"description": "The consent page.", "content": {"text/html": {}}}},
    },
}
