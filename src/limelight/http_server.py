"""Running the ASGI app on uvicorn, with the options the settings choose."""

from __future__ import annotations

from typing import Any

import uvicorn

from limelight.settings import Settings


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's keyword arguments.

    uvicorn believes X-Forwarded-For from 127.0.0.1 unless told otherwise, so a
    client on the same host (or behind a proxy that does not overwrite the
    header) could pick the address the failed-login limits count. Forwarded
    headers are believed only from the proxies the settings name.
    """
    proxies = settings.trusted_proxy_list
    return {
        "host": settings.host,
        "port": settings.port,
        "proxy_headers": bool(proxies),
        "forwarded_allow_ips": proxies or None,
        "access_log": False,
        "log_level": "warning",
    }


def serve(app: Any, settings: Settings) -> None:
    uvicorn.run(app, **uvicorn_options(settings))
