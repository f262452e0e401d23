"""The console's own files and the vendored ones, served by the app (no CDN), and
integration logos."""

from __future__ import annotations

from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response

from limelight.auth.oauth.logo import integration_logo
from limelight.console.render import HERE
from limelight.console.route import console_router
from limelight.web.request import runtime_of

router = console_router()
STATIC = (HERE / "static").resolve()
TYPES = {
    ".css": "text/css",
    ".js": "text/javascript",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
# Only these kinds: the vendoring manifest and the licences beside the files are
# for the people who read the repository.
SERVED = tuple(TYPES)


def static_file(path: str) -> Path | None:
    """The file under static/ that ``path`` names, or None (outside it, or not served)."""
    target = (STATIC / path).resolve()
    if not target.is_relative_to(STATIC) or not target.is_file():
        return None
    return target if target.suffix in SERVED else None


@router.get("/console/static/{path:path}")
async def static(path: str) -> Response:
    target = static_file(path)
    if target is None:
        return Response("Not Found", status_code=404, media_type="text/plain")
    # Revalidated on each use (a cheap 304), so a new version is seen at once.
    headers = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
    return FileResponse(target, media_type=TYPES[target.suffix], headers=headers)


@router.get("/integrations/{client_id}/logo.svg")
async def logo(request: Request, client_id: str) -> Response:
    svg = await run_in_threadpool(integration_logo, runtime_of(request).meta, client_id)
    if svg is None:
        return Response(status_code=404)
    # Opened directly, an SVG is a document that could run scripts on our origin:
    # the sandbox CSP forbids them (in <img> they never run anyway).
    headers = {
        "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "public, max-age=300",
    }
    return Response(svg.encode(), media_type="image/svg+xml", headers=headers)
