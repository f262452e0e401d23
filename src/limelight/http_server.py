"""Running the ASGI app on uvicorn, with the options the settings choose.

What the server does itself against slow or numerous clients: a request head
must arrive within ``header_timeout``, an idle keep-alive connection is closed
after ``keep_alive_timeout``, a request body must arrive within
``body_read_timeout`` (``api/body.py``), past ``max_concurrency`` connections a
request is answered 503, and past ``max_connections`` a new connection is
closed at once, so the process never runs out of file descriptors.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import logging
import os
import resource
import socket
import tempfile
from typing import Any, ClassVar

import uvicorn
from uvicorn._types import ASGIReceiveCallable, ASGISendCallable, Scope
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from limelight.errors import LimelightError
from limelight.logs import log_config
from limelight.metrics import MULTIPROCESS_VARIABLE
from limelight.settings import Settings

log = logging.getLogger("limelight.http")

# File descriptors kept for everything but client connections: the engines' files,
# the metadata database, the listening socket, logs.
RESERVED_FDS = 256
# Every 503 says when to retry (see ``errors.Unavailable``), these two as well: a
# connection past the cap, and a request past the concurrency limit.
RETRY_AFTER_SECONDS = 1
AT_CAPACITY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 19\r\nretry-after: %d\r\nconnection: close\r\n\r\nService Unavailable"
    % RETRY_AFTER_SECONDS
)


async def over_concurrency(
    scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable
) -> None:
    """uvicorn's answer past ``limit_concurrency`` (its ``service_unavailable``), with
    Retry-After, which uvicorn's lacks."""
    retry_after = str(RETRY_AFTER_SECONDS).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", b"19"),
                (b"retry-after", retry_after),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": b"Service Unavailable", "more_body": False})


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the two guards uvicorn (0.54) lacks.

    uvicorn times out an idle keep-alive connection, but not one that never
    completes its request head: 3,000 connections sending partial headers were
    held for as long as they stayed, and 19,990 of them used up the process's
    file descriptors, after which even /health went unanswered. Its
    ``limit_concurrency`` answers 503 only once a head is complete, so it never
    sees such connections. Here a connection whose head is not complete within
    ``header_timeout`` of its opening (or of its previous response) is closed,
    and a connection beyond ``max_connections`` is answered 503 and closed at once.
    Both 503s carry Retry-After, which uvicorn's own lacks.

    A class of the module (not made per server) so that uvicorn's worker
    processes can import it; ``configure_guards`` sets its limits in each process.
    """

    header_timeout: ClassVar[float] = 10.0
    max_connections: ClassVar[int] = 2000
    _head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.max_connections:
            self.transport = transport  # connection_lost closes it again
            transport.write(AT_CAPACITY)
            transport.close()
            return
        super().connection_made(transport)
        self._await_head()

    def _await_head(self) -> None:
        self._head_deadline = self.loop.call_later(self.header_timeout, self._head_too_late)

    def _head_too_late(self) -> None:
        self._head_deadline = None
        if not self.transport.is_closing():
            self.transport.close()

    def _stop_waiting(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def on_headers_complete(self) -> None:
        self._stop_waiting()
        limit = self.limit_concurrency
        if limit is None or (len(self.connections) < limit and len(self.tasks) < limit):
            super().on_headers_complete()
            return
        # Over the limit: uvicorn would answer its own 503, without Retry-After. Its check
        # is turned off for this request and it serves ours; both are put back at once
        # (one connection's request, on the event loop).
        log.warning("over %d connections or requests at once: answered 503", limit)
        app, self.app, self.limit_concurrency = self.app, over_concurrency, None
        try:
            super().on_headers_complete()
        finally:
            self.app, self.limit_concurrency = app, limit

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # uvicorn arms its keep-alive timer when it waits for the next request;
        # a data byte stops that timer, so the next head gets a deadline too.
        if self.timeout_keep_alive_task is not None:
            self._stop_waiting()
            self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)


def configure_guards(settings: Settings) -> int:
    """Set this process's connection guards from the settings; the connection cap."""
    max_connections = connection_capacity(settings.max_connections)
    GuardedHttpToolsProtocol.header_timeout = settings.header_timeout
    GuardedHttpToolsProtocol.max_connections = max_connections
    return max_connections


def connection_capacity(wanted: int) -> int:
    """``wanted``, or fewer when the file descriptor limit cannot hold that many.

    The soft limit is raised toward the hard one first (as servers commonly do).
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = wanted + RESERVED_FDS
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return wanted
    capacity = max(1, soft - RESERVED_FDS)
    log.warning("file descriptor limit %d: at most %d connections", soft, capacity)
    return capacity


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's keyword arguments.

    uvicorn believes X-Forwarded-For from 127.0.0.1 unless told otherwise, so any
    client on the same host (or relayed by a local proxy that passes the header on
    without adding its own entry) could pick the address the failed-login limits
    count. Forwarded headers are believed only from the proxies the settings name.
    """
    proxies = settings.trusted_proxy_list
    max_connections = configure_guards(settings)
    return {
        "host": settings.host,
        "port": settings.port,
        "http": GuardedHttpToolsProtocol,
        "timeout_keep_alive": settings.keep_alive_timeout,
        "limit_concurrency": min(settings.max_concurrency, max_connections),
        "proxy_headers": bool(proxies),
        "forwarded_allow_ips": proxies or None,
        # The app logs its own access lines (with the tenant and the process).
        "access_log": False,
        "log_level": "warning",
        "log_config": log_config(settings),
    }


class PortInUse(LimelightError):
    pass


def ensure_port_free(host: str, port: int) -> None:
    """Raise ``PortInUse`` when the address cannot be listened on, before anything is
    created: uvicorn would find out only once the server had set itself up.

    Bound as uvicorn binds it (SO_REUSEADDR), so a port left in TIME_WAIT by a
    previous server is free, and one another process listens on is not.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise PortInUse(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise PortInUse(
                    f"port {port} on {host} is in use by another process; stop it or set "
                    "LIMELIGHT_PORT to another port"
                ) from None
            raise PortInUse(f"cannot listen on {host}:{port}: {exc.strerror}") from None


# The youngest generation of Python's garbage collector is collected after this many
# allocations (Python's default: 700). A 6MB batch parses into about 300,000 objects
# that all stay alive until it is stored, so the default collected and promoted them
# hundreds of times a batch, and each promotion counted towards a full collection of the
# server's whole heap. With the objects of start-up frozen (never scanned again) and
# this threshold, the ingest pipeline (parse, check, enrich, encode) of a 6MB batch took
# 19.6 µs an event against 29.4, and of 10-event batches 16.1 against 16.6, with the
# server's modules loaded (medians of 6 rounds, one process each, one after the other).
GC_YOUNG_THRESHOLD = 10_000


def settle_heap() -> None:
    """Freeze what start-up made and collect the young generation less often (above):
    for the serving process, whose heap is its modules and its app, not a test's."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)


# The API a worker process serves (``serve`` passes it on through the environment).
APP_VARIABLE = "LIMELIGHT_SERVE_APP"


def worker_app() -> Any:
    """The app of one of several worker processes (uvicorn imports and calls this)."""
    from limelight.app import create_named_app

    settings = Settings()
    configure_guards(settings)
    app = create_named_app(settings, os.environ.get(APP_VARIABLE, "all"))  # type: ignore[arg-type]
    settle_heap()
    return app


def serve(settings: Settings, app_name: str, workers: int = 1) -> None:
    """Serve ``app_name`` on the settings' address, in ``workers`` processes."""
    from limelight.app import create_named_app

    options = uvicorn_options(settings)
    if workers == 1:
        app = create_named_app(settings, app_name)  # type: ignore[arg-type]
        settle_heap()
        uvicorn.run(app, **options)
        return
    os.environ[APP_VARIABLE] = app_name
    # Each worker counts its metrics in files here, and a scrape of any reads them all.
    with tempfile.TemporaryDirectory(prefix="limelight-metrics-") as metrics_dir:
        os.environ[MULTIPROCESS_VARIABLE] = metrics_dir
        uvicorn.run("limelight.http_server:worker_app", factory=True, workers=workers, **options)
