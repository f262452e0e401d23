"""The whole server's routes: the ingest APIs are matched first and shadow nothing."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from starlette.routing import Mount

from limelight.app import create_app
from limelight.settings import Settings

INGEST_PREFIXES = ("/events", "/otel", "/es", "/loki", "/services/collector")
# Paths of the mounted apps, for routes whose pattern starts with a parameter.
INGEST_PATHS = ("/events/v1/logs", "/events/", "/otel/v1/traces", "/otel/v1/logs", "/otel/",
                "/es/_bulk", "/es/logs/_bulk", "/es/", "/loki/api/v1/push",
                "/services/collector/event", "/services/collector/raw")  # fmt: skip
# Routes of the main app that serve a mounted app's root (Beats ask for /es itself).
ROOTS = {"/es", "/services/collector"}


def _routes(routes: Iterable[Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every route with its full path; a router included by FastAPI is walked into (its
    wrapper is not public API: a FastAPI upgrade that changes it fails here, loudly)."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from _routes(included.routes, prefix + route.include_context.prefix)
        else:
            assert isinstance(route.path, str), route
            yield prefix + route.path, route


def _shadowed(path: str, route: Any) -> bool:
    if path.startswith(INGEST_PREFIXES):
        return True
    pattern = route.path_regex if path == route.path else None
    assert pattern is not None, f"{path}: a prefixed router; match its full path here"
    return any(pattern.match(p) for p in INGEST_PATHS)


def test_ingest_mounts_come_before_every_other_route_and_shadow_none(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=tmp_path))
    routes = app.router.routes
    mounts = [i for i, r in enumerate(routes) if isinstance(r, Mount)]
    assert [routes[i].path for i in mounts] == list(INGEST_PREFIXES)
    # Before the console's and the APIs' routers, which are many: an event request
    # is matched against every route ahead of its mount.
    assert all(not hasattr(r, "original_router") for r in routes[: mounts[0]])
    others = [
        pr
        for i, r in enumerate(routes)
        if i not in mounts and getattr(r, "path", None) not in ROOTS
        for pr in _routes([r])
    ]
    assert len(others) > 50  # the console's pages and the APIs are walked into
    assert [p for p, r in others if _shadowed(p, r)] == []
