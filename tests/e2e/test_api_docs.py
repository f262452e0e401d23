"""The API's OpenAPI document: valid, covering every route the server answers, and true:
every operation it lists is one the server serves."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
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
            # OpenAPI names a parameter without its converter: {key:path} is {key}.
            path = re.sub(r"\{(\w+):path\}", r"{\1}", path)
            missing += sorted(
                (path, m.lower()) for m in methods if (path, m.lower()) not in documented
            )
    assert missing == []


def test_every_operation_says_what_it_does_and_what_it_answers(document: dict[str, Any]) -> None:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            assert operation.get("summary"), (path, method)
            assert operation.get("tags"), (path, method)
            assert operation.get("responses"), (path, method)
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is not None and path.startswith(("/v1/", "/events/", "/oauth/")):
                assert "example" in body, (path, method)


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
