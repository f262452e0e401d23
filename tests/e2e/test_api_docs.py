"""The API's OpenAPI document: valid, covering every route the server answers, and true:
every operation it lists is one the server serves."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.routing import APIRoute, iter_route_contexts
from openapi_spec_validator import validate

from limelight.app import create_app
from limelight.settings import Settings
from tests import web
from tests.support import LiveServer

# Routes that are not part of the API, each with why.
NOT_API = {
    # The operator's CLI and the serving process: answers 404 to everyone else, so
    # naming it would only tell an attacker where to knock.
    "/operator/backup",
    "/operator/datasets",
    "/openapi.json",  # the document itself
}
# What answers the catch-all routes of the mounted apps and the OAuth endpoints.
CATCH_ALL_DOCUMENTED = {
    "/events/{path:path}": {("/events/v1/{dataset}", "post")},
    "/otel/{path:path}": {("/otel/v1/traces", "post"), ("/otel/v1/logs", "post"),
                          ("/otel/v1/metrics", "post")},
    "/es/{path:path}": {("/es/_bulk", "post"), ("/es/{index}/_bulk", "post"),
                        ("/es/_license", "get"), ("/es/_cluster/health", "get")},
    "/es": {("/es", "get")},
    "/loki/{path:path}": {("/loki/api/v1/push", "post")},
    "/services/collector/{path:path}": {("/services/collector/event", "post"),
                                        ("/services/collector/raw", "post"),
                                        ("/services/collector/health", "get")},
    "/services/collector": {("/services/collector", "post")},
}  # fmt: skip


def served_routes(routes: list[Any], prefix: str = "") -> Iterator[tuple[str, set[str], str]]:
    """(path, methods, module of the endpoint) of every route, mounted apps included."""
    for route in routes:
        if type(route).__name__ == "_IncludedRouter":  # FastAPI's included router
            yield from served_routes(
                route.original_router.routes, prefix + route.include_context.prefix
            )
        elif hasattr(route, "endpoint"):
            methods = set(getattr(route, "methods", None) or {"GET"}) - {"HEAD", "OPTIONS"}
            yield prefix + route.path, methods, route.endpoint.__module__
        else:  # a Mount
            yield from served_routes(getattr(route, "routes", []), prefix + route.path)


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    app = create_app(Settings(data_dir=tmp_path_factory.mktemp("docs")))
    return app.openapi()


def test_the_document_is_valid_openapi(document: dict[str, Any]) -> None:
    validate(document)
    assert document["info"]["title"] == "Limelight"


def test_every_route_of_the_api_is_documented(document: dict[str, Any]) -> None:
    app = create_app(Settings(data_dir="/nonexistent-docs-check"))
    documented = {(p, m) for p, item in document["paths"].items() for m in item}
    missing = []
    for path, methods, module in served_routes(app.routes):
        if module.startswith("limelight.console") or path in NOT_API or path.endswith("/"):
            continue  # console pages are for people; "/v1/queries/" is an alias
        if path in CATCH_ALL_DOCUMENTED:
            missing += sorted(CATCH_ALL_DOCUMENTED[path] - documented)
        elif module == "limelight.api.oauth":  # any method, answering 405 but one
            missing += [] if any(p == path for p, _ in documented) else [(path, "*")]
        else:
            # OpenAPI names a parameter without its converter: {key:text} is {key}.
            path = re.sub(r"\{(\w+):\w+\}", r"{\1}", path)
            missing += sorted(
                (path, m.lower()) for m in methods if (path, m.lower()) not in documented
            )
    assert missing == []


# Operations any caller may use, each with why; every other one names who may call.
PUBLIC = {
    ("/health", "get"),  # for load balancers
    ("/metrics", "get"),  # for the networks LIMELIGHT_METRICS_ALLOW names; a 404 to others
    ("/schemas/limelight-resources.json", "get"),  # a schema, fetched by editors
    ("/oauth/authorize", "get"),  # a page for a person, who signs in on it
    ("/oauth/token", "post"),  # the client authenticates in the request itself
    ("/oauth/revoke", "post"),
    ("/services/collector/health", "get"),  # shippers' health checks send no token
}
# JSON bodies without an example: OTLP's are OpenTelemetry's format, defined by its spec.
NO_EXAMPLE = {("/otel/v1/traces", "post"), ("/otel/v1/logs", "post"), ("/otel/v1/metrics", "post")}


def test_every_operation_says_what_it_does_and_what_it_answers(document: dict[str, Any]) -> None:
    schemes = document["components"]["securitySchemes"]
    for path, item in document["paths"].items():
        for method, operation in item.items():
            where = (path, method)
            assert operation.get("summary"), where
            assert operation.get("tags"), where
            answers = operation.get("responses", {})
            assert any(status.startswith("2") for status in answers), where
            if where in PUBLIC:
                assert "security" not in operation, where
            else:
                assert operation.get("security"), where
                assert all(name in schemes for s in operation["security"] for name in s), where
            json_bodies = [operation.get("requestBody", {}).get("content", {})]
            json_bodies += [a.get("content", {}) for s, a in answers.items() if s[0] == "2"]
            for content in json_bodies:
                if "application/json" in content and where not in NO_EXAMPLE:
                    assert "example" in content["application/json"], where


def test_each_typed_route_is_documented_on_its_decorator() -> None:
    """Its summary, answers and who may call, beside the route: without them FastAPI would
    still list it, with a summary made of the function's name and answers it does not give."""
    app = create_app(Settings(data_dir="/nonexistent-docs-check"))
    undocumented = []
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        if isinstance(route, APIRoute) and route.include_in_schema:
            public = (route.path_format, "get") in PUBLIC
            declared = route.summary and route.responses
            if not declared or not (public or (route.openapi_extra or {}).get("security")):
                undocumented.append((route.path_format, route.endpoint.__module__))
    assert undocumented == []


def test_every_documented_operation_is_served(document: dict[str, Any], server: LiveServer) -> None:
    """Called without a key, each answers as what it is (401, 400, 200, a page), never as
    a path or method the server does not know."""
    unknown = []
    for path, item in document["paths"].items():
        concrete = re.sub(r"\{[^}]+\}", "x1", path)
        for method in item:
            answer = web.request(method.upper(), server.url + concrete, timeout=30)
            if answer.status_code in (404, 405) and path != "/metrics":
                unknown.append((method, path, answer.status_code))
    assert unknown == []
    metrics = web.get(server.url + "/metrics", timeout=30)  # from loopback: allowed
    assert metrics.status_code == 200


def test_the_document_and_the_docs_page_are_served(server: LiveServer) -> None:
    served = web.get(server.url + "/openapi.json", timeout=30)
    assert served.status_code == 200
    assert "/events/v1/{dataset}" in served.json()["paths"]
    page = web.get(server.url + "/docs", timeout=30)
    assert page.status_code == 200
    assert "/console/static/vendor/swagger-ui/swagger-ui-bundle.js" in page.text
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy
    bundle = web.get(server.url + "/console/static/vendor/swagger-ui/swagger-ui-bundle.js")
    assert bundle.status_code == 200 and len(bundle.content) > 1_000_000
