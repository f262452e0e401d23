"""``/docs``: the API's interactive documentation (Swagger UI, served by the app, over
``/openapi.json``). Public like the document: it holds no data, and calls made from it
carry the key a reader types in."""

from __future__ import annotations

from starlette.responses import Response

from limelight.console.render import page_headers, templates
from limelight.console.route import console_router

router = console_router()


@router.get("/docs")
async def api_docs() -> Response:
    headers = page_headers()
    # Swagger UI's stylesheet draws its icons from data: URLs.
    headers["Content-Security-Policy"] = headers["Content-Security-Policy"].replace(
        "img-src 'self'", "img-src 'self' data:"
    )
    html = templates.get_template("api_docs.html").render()
    return Response(html, media_type="text/html", headers=headers)
