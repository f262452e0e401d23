"""The OpenAPI document of the whole HTTP API, served at ``/openapi.json``.

FastAPI describes the typed routes (their path and query parameters) and what each
declares on its decorator; the catch-all routes it cannot see (the Events API, OTLP,
OAuth, the shippers' formats, ``/metrics``) list their operations in their modules'
``OPERATIONS``; request bodies' schemas come from the same pydantic models that
validate them. The document is built once per app.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, iter_route_contexts
from pydantic.json_schema import models_json_schema

from limelight.alerts.spec import AlertFields
from limelight.api import es, events, hec, loki, metrics, oauth, otel
from limelight.api.openapi import (
    AUTHORIZE,
    DESCRIPTION,
    ERROR_SCHEMA,
    HEALTH,
    SECURITY_SCHEMES,
    Operation,
)
from limelight.api.query_runs import RunBody
from limelight.boards import BoardFields
from limelight.query.spec import QueryFields
from limelight.query.traces import TraceSearch

# What FastAPI cannot see, by (path, method), in the order the document lists them: Swagger
# UI orders its sections by the first operation of each tag.
UNTYPED: dict[tuple[str, str], Operation] = {
    **HEALTH,
    **metrics.OPERATIONS,
    **events.OPERATIONS,
    **otel.OPERATIONS,
    **AUTHORIZE,
    **oauth.OPERATIONS,
    **es.OPERATIONS,
    **loki.OPERATIONS,
    **hec.OPERATIONS,
}


def _components() -> dict[str, Any]:
    """The schemas of the request bodies, from the pydantic models that validate them."""
    _, defs = models_json_schema(
        [
            (QueryFields, "validation"),
            (AlertFields, "validation"),
            (RunBody, "validation"),
            (TraceSearch, "validation"),
            (BoardFields, "validation"),
        ],
        ref_template="#/components/schemas/{model}",
    )
    schemas: dict[str, Any] = defs["$defs"]
    schemas["Error"] = ERROR_SCHEMA
    return schemas


def _declared_answers(app: FastAPI, paths: dict[str, Any]) -> None:
    """Each typed route's answers are exactly the ones its decorator declares: FastAPI's
    own 200 and 422 say nothing true of these endpoints (they read their bodies
    themselves and answer 400), so they are not merged in."""
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        if not isinstance(route, APIRoute) or not route.include_in_schema:
            continue
        for method in route.methods or ():
            operation = paths[context.path_format or route.path_format][method.lower()]
            operation["responses"] = {str(status): a for status, a in route.responses.items()}


def openapi_document(app: FastAPI) -> dict[str, Any]:
    doc = get_openapi(
        title="Limelight",
        version=version("limelight"),
        description=DESCRIPTION,
        routes=app.routes,
    )
    paths: dict[str, Any] = doc.setdefault("paths", {})
    _declared_answers(app, paths)
    for (path, method), operation in UNTYPED.items():
        paths.setdefault(path, {})[method] = operation
    components = doc.setdefault("components", {})
    schemas = {**components.get("schemas", {}), **_components()}
    # FastAPI's 422 shapes, referenced by no operation once the declared answers replaced
    # FastAPI's.
    if "/HTTPValidationError" not in json.dumps(paths):
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)
    components["schemas"] = schemas
    components["securitySchemes"] = SECURITY_SCHEMES
    return doc


def install_openapi(app: FastAPI) -> None:
    """Serve the whole document at /openapi.json (built on first use, then kept)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = openapi_document(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
