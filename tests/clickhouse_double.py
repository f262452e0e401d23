"""A stand-in for a ClickHouse server's HTTP interface, running each statement on chDB.

No ClickHouse server with the JSON type can be installed on these machines, so
the server transport (clickhouse-connect) is tested against this: a separate
process serving the part of ClickHouse's HTTP protocol that clickhouse-connect
uses, over a chDB engine of its own data directory.

What it does as ClickHouse does:
- the statement from the ``query`` parameter, the body, or both (the parameter
  first, then the body: how an INSERT's data follows its statement);
- ``param_<name>`` bound values, ``database``, and any other parameter as a
  setting of the statement; ``default_format``, else TabSeparated, unless the
  statement names a FORMAT;
- request bodies compressed with gzip, deflate or zstd (``Content-Encoding``);
- the query and its bound values as form fields (``multipart/form-data``), which
  clickhouse-connect sends when they would make the URL too long;
- ``session_id``: a session used by one request at a time, another request
  with it gets error 373 (SESSION_IS_LOCKED), as clickhouse-connect's shared
  clients met on real servers;
- answers with ``X-ClickHouse-Query-Id``, ``-Format``, ``-Timezone``,
  ``-Server-Display-Name`` and ``-Summary``; errors as HTTP 500 (404 for an
  unknown table or database) with ClickHouse's ``Code: N. DB::Exception: ...``
  text and ``X-ClickHouse-Exception-Code``; ``/ping`` answers ``Ok.``.

Where it differs from a real server, knowingly:
- settings a session keeps (``SET`` within a session_id) are not kept from one
  request to the next: every request runs on a fresh chDB session;
- responses are never compressed (clients are told so by the absent
  ``Content-Encoding``), progress headers are not sent, and results are
  buffered, not streamed;
- no users, quotas or readonly profiles: credentials are accepted as sent;
- one engine, one process: it is as fast as chDB is on this machine, with HTTP
  in front, not a measure of a real server's speed.

    python -m tests.clickhouse_double --port 8123 --path /tmp/ch-double
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import threading
import uuid
import zlib
from email.parser import BytesParser
from email.policy import default as default_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

# Parameters of the HTTP interface itself, never settings of the statement.
HTTP_ONLY = frozenset(
    {
        "query", "database", "default_format", "query_id", "session_id", "session_timeout",
        "session_check", "compress", "decompress", "user", "password", "quota_key",
        "buffer_size", "wait_end_of_query", "enable_http_compression",
        "http_zlib_compression_level", "send_progress_in_http_headers",
        "http_headers_progress_interval_ms", "client_protocol_version",
    }
)  # fmt: skip
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CODE = re.compile(r"Code: (\d+)\.")
_FORMAT = re.compile(r"\bFORMAT\s+([A-Za-z0-9_]+)\s*;?\s*$", re.IGNORECASE)
_NOT_FOUND = {60, 81}  # UNKNOWN_TABLE, UNKNOWN_DATABASE


class Double:
    def __init__(self, path: Path) -> None:
        from chdb import session

        self._path = path
        self._new_session = session.Session
        # A first session keeps the engine open while requests come and go.
        self._keeper = session.Session(str(path))
        self._locked: set[str] = set()
        self._lock = threading.Lock()

    def run(self, params: dict[str, str], body: bytes) -> tuple[int, bytes, dict[str, str]]:
        """(status, body, headers) of one request."""
        session_id = params.get("session_id")
        if session_id:
            with self._lock:
                if session_id in self._locked:
                    return _error(
                        "Code: 373. DB::Exception: Session "
                        f"{session_id} is locked by a concurrent client. (SESSION_IS_LOCKED)"
                    )
                self._locked.add(session_id)
        try:
            return self._run(params, body)
        finally:
            if session_id:
                with self._lock:
                    self._locked.discard(session_id)

    def _run(self, params: dict[str, str], body: bytes) -> tuple[int, bytes, dict[str, str]]:
        text = body.decode("utf-8", "surrogateescape")
        query = params.get("query", "")
        sql = f"{query}\n{text}" if query and text else query or text
        if not sql.strip():
            return _error("Code: 62. DB::Exception: Empty query. (SYNTAX_ERROR)")
        bound = {k[6:]: v for k, v in params.items() if k.startswith("param_")}
        settings = {
            k: v for k, v in params.items() if k not in HTTP_ONLY and not k.startswith("param_")
        }
        found = _FORMAT.search(
            sql.splitlines()[0] if sql.lstrip().upper().startswith("INSERT") else sql
        )
        fmt = found.group(1) if found else params.get("default_format", "TabSeparated")
        query_id = params.get("query_id") or str(uuid.uuid4())
        sess = self._new_session(str(self._path))
        try:
            if "database" in params:
                sess.query(f"USE {_identifier(params['database'])}")
            for name, value in settings.items():
                sess.query(f"SET {_identifier(name)} = {_literal(value)}")
            result = sess.query(sql, fmt, params=bound) if bound else sess.query(sql, fmt)
            payload = bytes(result.bytes())
            summary = {
                "read_rows": str(result.rows_read()),
                "read_bytes": str(result.bytes_read()),
                "written_rows": "0",
                "written_bytes": "0",
                "total_rows_to_read": "0",
                "result_rows": str(result.rows_read()),
                "result_bytes": str(len(payload)),
                "elapsed_ns": str(int(result.elapsed() * 1e9)),
            }
        except Exception as exc:  # chDB's errors carry ClickHouse's text
            return _error(str(exc))
        finally:
            sess.close()
        return (
            200,
            payload,
            {
                "X-ClickHouse-Query-Id": query_id,
                "X-ClickHouse-Format": fmt,
                "X-ClickHouse-Timezone": "UTC",
                "X-ClickHouse-Server-Display-Name": "limelight-clickhouse-double",
                "X-ClickHouse-Summary": json.dumps(summary),
                "Content-Type": "text/plain; charset=UTF-8",
            },
        )

    def close(self) -> None:
        self._keeper.close()


def _identifier(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ValueError(f"Code: 115. DB::Exception: Unknown setting {name!r}. (UNKNOWN_SETTING)")
    return name


def _literal(value: str) -> str:
    if re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _error(text: str) -> tuple[int, bytes, dict[str, str]]:
    found = _CODE.search(text)
    code = int(found.group(1)) if found else 1000
    status = 404 if code in _NOT_FOUND else 500
    body = text if text.startswith("Code:") else f"Code: {code}. DB::Exception: {text}"
    return (
        status,
        (body.rstrip() + "\n").encode(),
        {"X-ClickHouse-Exception-Code": str(code), "Content-Type": "text/plain; charset=UTF-8"},
    )


def _form_fields(content_type: str, body: bytes) -> dict[str, str]:
    """The fields of a multipart/form-data body (clickhouse-connect sends the query and
    its bound values so when they would make the URL too long)."""
    message = BytesParser(policy=default_policy).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    fields = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            fields[name] = payload.decode()
    return fields


def _inflate(body: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        return gzip.decompress(body)
    if encoding == "deflate":
        return zlib.decompress(body)
    if encoding == "zstd":
        import zstandard

        return zstandard.ZstdDecompressor().decompress(body, max_output_size=1 << 30)
    return body


def serve(port: int, path: Path, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    double = Double(path)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _handle(self) -> None:
            url = urlsplit(self.path)
            pinged = url.path.rstrip("/") in ("/ping", "") and "query" not in url.query
            if pinged and self.command == "GET":
                self._answer(200, b"Ok.\n", {"Content-Type": "text/plain"})
                return
            params = dict(parse_qsl(url.query, keep_blank_values=True))
            size = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(size) if size else b""
            ctype = self.headers.get("Content-Type", "")
            if ctype.startswith("application/x-www-form-urlencoded"):
                params.update(parse_qsl(body.decode(), keep_blank_values=True))
                body = b""
            elif ctype.startswith("multipart/form-data"):
                params.update(_form_fields(ctype, body))
                body = b""
            body = _inflate(body, self.headers.get("Content-Encoding", "").lower())
            self._answer(*double.run(params, body))

        do_GET = do_POST = _handle  # noqa: N815 - the standard library's names

        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8123)
    parser.add_argument("--path", type=Path, required=True)
    args = parser.parse_args()
    args.path.mkdir(parents=True, exist_ok=True)
    server = serve(args.port, args.path)
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
