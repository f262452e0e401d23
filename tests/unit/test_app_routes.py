"""The whole server's routes: the ingest APIs are matched first and shadow nothing."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from starlette.routing import Mount

from limelight.app import create_app
from limelight.settings import Settings

INGEST_PREFIXES = ("/events", "/otel")


def _paths(routes: Iterable[Any], prefix: str = "") -> Iterator[str]:
    """Every route's full path; a router included by FastAPI is walked into (its
    wrapper is not public API: a FastAPI upgrade that changes it fails here, loudly)."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from _paths(included.routes, prefix + route.include_context.prefix)
        else:
            assert isinstance(route.path, str), route
            yield prefix + route.path


def test_ingest_mounts_come_before_every_other_route_and_shadow_none(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=tmp_path))
    routes = app.router.routes
    mounts = [i for i, r in enumerate(routes) if isinstance(r, Mount)]
    assert [routes[i].path for i in mounts] == list(INGEST_PREFIXES)
    # Before the console's and the APIs' routers, which are many: an event request
    # is matched against every route ahead of its mount.
    assert all(not hasattr(r, "original_router") for r in routes[: mounts[0]])
    others = [p for i, r in enumerate(routes) if i not in mounts for p in _paths([r])]
    assert len(others) > 50  # the console's pages and the APIs are walked into
    shadowed = [p for p in others if p.startswith(INGEST_PREFIXES)]
    assert shadowed == []
