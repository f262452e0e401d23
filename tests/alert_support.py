"""Real receivers for alert notifications: an HTTP server that records what it is sent
(and can be told to fail), a destination that accepts connections and never answers,
and an SMTP server (aiosmtpd)."""

from __future__ import annotations

import hashlib
import hmac
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson
from aiosmtpd.controller import Controller

from tests.support import free_port


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return orjson.loads(self.body)

    def signed_by(self, secret: str) -> bool:
        expected = "sha256=" + hmac.new(secret.encode(), self.body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(self.headers.get("x-limelight-signature", ""), expected)


def _open() -> threading.Event:
    gate = threading.Event()
    gate.set()
    return gate


@dataclass
class WebhookReceiver:
    """Records every POST; ``fail[path] = n`` answers the next n POSTs there with 503;
    while ``answering`` is clear, a POST is recorded and its answer held until it is set."""

    received: list[Received] = field(default_factory=list)
    fail: dict[str, int] = field(default_factory=dict)
    answering: threading.Event = field(default_factory=_open)
    arrived: threading.Condition = field(default_factory=threading.Condition)
    port: int = 0

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def on(self, path: str) -> list[Received]:
        with self.arrived:
            return [r for r in self.received if r.path == path]

    def wait_for(self, path: str, count: int, timeout: float = 30) -> list[Received]:
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.on(path)) >= count, timeout)
            return self.on(path)


@contextmanager
def webhook_receiver() -> Iterator[WebhookReceiver]:
    receiver = WebhookReceiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the standard library's name
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            with receiver.arrived:
                receiver.received.append(
                    Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                failing = receiver.fail.get(self.path, 0)
                if failing:
                    receiver.fail[self.path] = failing - 1
                receiver.arrived.notify_all()
            receiver.answering.wait(60)
            self.send_response(503 if failing else 200)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Mailbox:
    messages: list[EmailMessage] = field(default_factory=list)
    port: int = 0
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, count: int, timeout: float = 30) -> list[EmailMessage]:
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.messages) >= count, timeout)
            return list(self.messages)


@contextmanager
def smtp_server() -> Iterator[Mailbox]:
    mailbox = Mailbox()

    class Handler:
        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
            message = message_from_bytes(envelope.content, policy=policy.default)
            with mailbox.arrived:
                mailbox.messages.append(message)  # type: ignore[arg-type]
                mailbox.arrived.notify_all()
            return "250 OK"

    mailbox.port = free_port()
    controller = Controller(Handler(), hostname="127.0.0.1", port=mailbox.port)
    controller.start()
    try:
        yield mailbox
    finally:
        controller.stop()


@dataclass
class SilentDestination:
    """Accepts every connection and never answers; counts the connections."""

    port: int = 0
    connections: list[socket.socket] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def wait_for(self, count: int, timeout: float = 30) -> int:
        """The connections accepted once there are ``count`` of them, or at the timeout."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.connections) >= count, timeout)
            return len(self.connections)


@contextmanager
def silent_destination() -> Iterator[SilentDestination]:
    destination = SilentDestination()
    listener = socket.create_server(("127.0.0.1", 0), backlog=256)
    destination.port = listener.getsockname()[1]

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # closed
            with destination.arrived:
                destination.connections.append(conn)
                destination.arrived.notify_all()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield destination
    finally:
        listener.close()
        with destination.arrived:
            for conn in destination.connections:
                conn.close()
