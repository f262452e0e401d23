"""Test helpers: a live server process, its CLI, and its metadata opened in-process.

Tenants and integrations are made over the server's metadata database in this
process, as the CLI would make them: a CLI subprocess costs about 0.75 s, and
the CLI has tests of its own (``tests/e2e/test_cli.py``).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any, NoReturn

import httpx

from limelight.auth.api_keys import mint_key
from limelight.auth.key_owners import admin_key_owner
from limelight.settings import Settings
from limelight.store.meta import repos
from limelight.store.meta.db import MetaDB
from tests import forkserver, web


def unavailable(reason: str) -> NoReturn:
    """A service or tool this test needs is missing: skipped where a developer may lack it,
    a failure under CI (``CI=true``), whose ``.ci/run`` makes sure each is there, so CI
    can never pass with part of the matrix skipped."""
    import pytest

    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: .ci/run must provide it)", pytrace=False)
    pytest.skip(reason)


CLI = [sys.executable, "-m", "limelight"]
# Commands that hold a process of their own (a server, a worker, the engine of a backup)
# or run an event loop (a test notification), run as the user runs them: in a process of
# their own (tests/forkserver.py).
OWN_PROCESS = {("serve",), ("worker",), ("backup",), ("restore",), ("alerts", "test")}


def run_cli(
    args: list[str] | tuple[str, ...], env: dict[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``limelight ARGS`` with ``env``, answered as a finished process: in this process
    (typer's runner: the same commands, output and exit codes, without the 0.7 s a
    Python start costs), except the commands of ``OWN_PROCESS``."""
    if tuple(args[:1]) in OWN_PROCESS or tuple(args[:2]) in OWN_PROCESS:
        _, code, out, err = forkserver.run("limelight", list(args), env, (stdin or "").encode())
        return subprocess.CompletedProcess(list(args), code, out, err)
    from typer.testing import CliRunner

    from limelight.cli import app

    result = CliRunner().invoke(app, list(args), env=env, input=stdin, catch_exceptions=False)
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)


@dataclass
class Tenant:
    workspace_id: str
    environment_id: str
    ingest_key: str
    admin_key: str
    owner_id: str = ""  # the user the admin key acts for (the author of what it saves)


@dataclass
class LiveServer:
    data_dir: Path
    port: int
    env: dict[str, str]
    # Extra arguments of `limelight serve`, e.g. ("--app", "events").
    serve_args: tuple[str, ...] = ()
    proc: forkserver.Process | None = None
    log_path: Path = field(init=False)
    after_stop: list[Callable[[], None]] = field(default_factory=list)
    # "embedded" (SQLite and chDB in the server process) or "scaled" (PostgreSQL, the
    # ClickHouse double and two API processes)
    mode: str = "embedded"

    def __post_init__(self) -> None:
        self.log_path = self.data_dir / "server.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def events_url(self) -> str:
        return f"{self.url}/events"

    def start(self, timeout: float = 60.0) -> None:
        log = self.log_path.open("ab")
        self.proc = forkserver.start(
            "limelight", ["serve", *self.serve_args], self.env, stdout=log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited early:\n{self.log_path.read_text()}")
            try:
                # uvicorn listens only once the engines are open, so any answer
                # means ready (an app served alone has no /health of its own).
                status = web.get(f"{self.url}/health", timeout=1).status_code
                if status == 200 or self.serve_args:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"server did not start:\n{self.log_path.read_text()}")

    def stop(self) -> None:
        if "meta" in self.__dict__:
            self.meta.dispose()
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        while self.after_stop:  # what the server stood on (scaled mode)
            self.after_stop.pop()()

    def kill(self) -> None:
        """SIGKILL: no shutdown hooks run."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def cli(self, *args: str, stdin: str | None = None) -> str:
        out = run_cli(args, self.env, stdin)
        if out.returncode != 0:
            raise RuntimeError(f"limelight {' '.join(args)} failed:\n{out.stdout}\n{out.stderr}")
        return out.stdout

    def cli_json(self, *args: str) -> Any:
        return json.loads(self.cli(*args, "--json"))

    @cached_property
    def meta(self) -> MetaDB:
        """The server's metadata database, opened in this process."""
        url = Settings(
            data_dir=self.data_dir, database_url=self.env.get("LIMELIGHT_DATABASE_URL")
        ).resolved_database_url
        return MetaDB(url)

    def new_tenant(self, redact: bool = True) -> Tenant:
        """A new workspace with an environment ``prod``, an ingest key and an admin key
        owned as ``limelight keys create`` owns it (the operator's account)."""
        with self.meta.session(immediate=True) as s:
            ws = repos.create_workspace(s, f"ws-{uuid.uuid4().hex[:10]}")
            env = repos.create_environment(s, ws, "prod", redact=redact)
            owner = admin_key_owner(s, ws, None)
            ingest = mint_key(s, env, "ingest").value
            admin = mint_key(s, env, "admin", user_id=owner.id).value
            return Tenant(ws.id, env.id, ingest, admin, owner.id)

    def read(self, admin_key: str, dataset: str | None = None, limit: int = 1000) -> list[Any]:
        """The newest stored events of the key's environment, newest first."""
        params: dict[str, Any] = {"limit": limit}
        if dataset is not None:
            params["dataset"] = dataset
        r = web.get(
            f"{self.url}/v1/events", params=params, headers={"Authorization": admin_key}, timeout=30
        )
        r.raise_for_status()
        events: list[Any] = r.json()["events"]
        return events

    def send(
        self, key: str, dataset: str, events: Any, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        return web.post(
            f"{self.events_url}/v1/{dataset}",
            json=events,
            headers={"x-api-key": key, **(headers or {})},
            timeout=30,
        )


ACCESS_PID = re.compile(r" INFO \[(\d+)\] limelight\.access: ")


def access_pids(lines: Iterable[str]) -> set[int]:
    """The server processes that wrote these lines of the access log."""
    return {int(m.group(1)) for line in lines if (m := ACCESS_PID.search(line))}


# A rate-limit window for tests that must never see one end: windows are aligned on
# the clock, and this one's next boundary is in May 2033.
NO_BOUNDARY_BEFORE_2033 = 1_000_000_000


def within_one_window(seconds_needed: float, window: float = 60) -> None:
    """Wait for the next rate-limit window when less than ``seconds_needed`` is left of
    this one. The server's windows are aligned on the clock, and its sliding count
    weighs the window before less and less, so a limit met just before a boundary
    lets one more through just after it: a test that fills a limit and expects the
    next one refused must do both in one window. Costs seconds_needed^2 / (2 window)
    on average."""
    left = window - time.time() % window
    if left < seconds_needed:
        time.sleep(left + 0.05)


# From the OS, not the seeded module generator: two test processes (or Hypothesis,
# which seeds ``random``) must not pick the same ports in the same order.
_PORTS = random.SystemRandom()


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _port_range() -> tuple[int, int]:
    """This test process's share of the ports below the kernel's ephemeral range: each
    pytest-xdist worker picks from a slice of its own. Two workers that picked the same
    port within the second before either server bound it made one server exit ("port
    in use") while its start, seeing the other's /health answer, took it as up.

    A worker that replaces a crashed one is numbered past the count (gw4 of 4): it takes
    the slice of the number it wraps to, whose first holder is gone."""
    high = _ephemeral_low()
    low = max(1024, high - 12_000)
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    index = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")) % count
    width = (high - low) // count
    assert width > 0, f"no ports below the ephemeral range ({low}-{high}) for {count} workers"
    return low + index * width, low + (index + 1) * width


def free_port() -> int:
    """A port nobody listens on, below the kernel's ephemeral range. A server binds its
    port seconds after it is chosen (once its stores are open); a port from that range
    could meanwhile be handed to another process's ``bind(0)`` or outgoing connection,
    and the server would exit at start. Below the range only another pick can take it,
    and another test process picks from another slice (``_port_range``)."""
    low, high = _port_range()
    while True:
        port = _PORTS.randrange(low, high)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # in use, or held by a listener of this machine
            return port


def launch(
    data_dir: Path, extra_env: dict[str, str] | None = None, serve_args: tuple[str, ...] = ()
) -> LiveServer:
    """A started server process of its own on a free port and ``data_dir``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = {
        **os.environ,
        "LIMELIGHT_DATA_DIR": str(data_dir),
        "LIMELIGHT_PORT": str(port),
        "LIMELIGHT_HOST": "127.0.0.1",
        # Tests keep a client's connection across slow steps (a CLI call on a busy
        # machine takes seconds): an idle connection closed under the client makes
        # its next request fail with a reset, which is not what these tests are about.
        "LIMELIGHT_KEEP_ALIVE_TIMEOUT": "120",
        "LIMELIGHT_HEADER_TIMEOUT": "120",
        # Tests send events of fixed dates a year back; the retention pass of a test
        # server that lives for the whole run must not remove one between its send and
        # its read (tests/e2e/test_retention.py runs retention at the default).
        "LIMELIGHT_RETENTION_DAYS": "3650",
        # Every test's failed logins and client authentications come from 127.0.0.1: on
        # a server shared by the whole run, the per-address limit refused one test's
        # requests (429) for what other tests did in the last five minutes. The
        # throttle's own tests start servers with the limits they test (extra_env).
        "LIMELIGHT_AUTH_FAILURES_PER_IP": "100000",
        # Tests send events on fixed days a year back, a backfill of a year among them:
        # at the default budget of past days a shared server made them wait for each
        # other's minute. The budget's own test starts a server with the default.
        "LIMELIGHT_PAST_DAYS_PER_MINUTE": "1000000",
        # Regexes from the dictionaries (off by default), so that the end-to-end tests
        # ask them of a server, embedded and scaled.
        "LIMELIGHT_REGEX_DICTIONARIES": "1",
        **(extra_env or {}),
    }
    server = LiveServer(data_dir=data_dir, port=port, env=env, serve_args=serve_args)
    server.start()
    return server


@cache
def _migrated_template() -> Path:
    """A SQLite metadata database with every migration applied, made once per process."""
    folder = Path(tempfile.mkdtemp(prefix="limelight-meta-"))
    atexit.register(shutil.rmtree, folder, True)
    template = MetaDB(f"sqlite:///{folder / 'meta.db'}")
    template.migrate()
    template.dispose()
    return folder / "meta.db"


def migrated_sqlite(path: Path) -> MetaDB:
    """A SQLite metadata database at ``path`` with every migration applied: a copy of
    one this test process migrated once. Migrating an empty database costs 50 ms of CPU
    and the suite's fixtures asked for over 200 (tests that test a migration still run
    it, from the revision they name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # SQLite's backup API: a consistent copy whatever the journal holds.
    with (
        contextlib.closing(sqlite3.connect(_migrated_template())) as source,
        contextlib.closing(sqlite3.connect(path)) as target,
    ):
        source.backup(target)
    return MetaDB(f"sqlite:///{path}")


PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def postgres_schema() -> Iterator[str]:
    """The URL of a fresh schema on 127.0.0.1:5432 (database ``test``), dropped afterwards;
    the test is skipped, saying why, when no server answers there."""
    from sqlalchemy import create_engine, text

    try:
        admin = create_engine(PG_URL, connect_args={"connect_timeout": 2})
        with admin.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:
        unavailable(f"PostgreSQL is not reachable on 127.0.0.1:5432 (db test): {exc}")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield f"{PG_URL}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@dataclass
class ClickHouseDouble:
    """A running ``tests.clickhouse_double`` process: ClickHouse's HTTP interface on chDB."""

    port: int
    proc: forkserver.Process

    @property
    def url(self) -> str:
        return f"http://default:@127.0.0.1:{self.port}/limelight"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def launch_clickhouse_double(data_dir: Path, timeout: float = 60.0) -> ClickHouseDouble:
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = (data_dir / "double.log").open("ab")
    proc = forkserver.start(
        "tests.clickhouse_double",
        ["--port", str(port), "--path", str(data_dir / "chdb")],
        dict(os.environ),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"the ClickHouse double exited:\n{(data_dir / 'double.log').read_text()}"
            )
        try:
            if web.get(f"http://127.0.0.1:{port}/ping", timeout=1).status_code == 200:
                return ClickHouseDouble(port, proc)
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the ClickHouse double did not start")


REAL_CLICKHOUSE_VARIABLE = "LIMELIGHT_TEST_CLICKHOUSE_URL"


def _events_server(data_dir: Path) -> tuple[dict[str, str], Callable[[], None]]:
    """The server-mode events settings: a real ClickHouse server when
    LIMELIGHT_TEST_CLICKHOUSE_URL names one (a database of its own), else a double."""
    real = os.environ.get(REAL_CLICKHOUSE_VARIABLE)
    env = {"LIMELIGHT_EVENTS_BACKEND": "clickhouse"}
    if real:
        env |= {
            "LIMELIGHT_CLICKHOUSE_URL": real,
            "LIMELIGHT_CLICKHOUSE_DATABASE": f"limelight_{uuid.uuid4().hex[:10]}",
        }
        return env, lambda: None
    double = launch_clickhouse_double(data_dir / "double")
    return env | {"LIMELIGHT_CLICKHOUSE_URL": double.url}, double.stop


def launch_scaled(
    data_dir: Path, extra_env: dict[str, str] | None = None, workers: int = 2
) -> LiveServer:
    """A server in the scaled mode: ``workers`` API processes on one port, metadata in a
    PostgreSQL schema of its own, events on a ClickHouse double (or the real server of
    LIMELIGHT_TEST_CLICKHOUSE_URL). Skipped, saying why, when PostgreSQL cannot be reached."""
    schemas = postgres_schema()
    url = next(schemas)
    events_env, stop_events = _events_server(data_dir)
    try:
        server = launch(
            data_dir / "server",
            {"LIMELIGHT_DATABASE_URL": url, **events_env, **(extra_env or {})},
            serve_args=("--workers", str(workers)),
        )
    except BaseException:
        stop_events()
        next(schemas, None)
        raise
    server.mode = "scaled"
    server.after_stop += [lambda: next(schemas, None), stop_events]
    return server


def launch_pair(data_dir: Path, extra_env: dict[str, str] | None = None) -> list[LiveServer]:
    """Two API processes on ports of their own, sharing one PostgreSQL schema and one
    ClickHouse double: requests go to the process a test names. Skipped, saying why,
    when PostgreSQL cannot be reached."""
    schemas = postgres_schema()
    url = next(schemas)
    events_env, stop_events = _events_server(data_dir)
    env = {
        "LIMELIGHT_DATABASE_URL": url,
        **events_env,
        # Both must sign and read the console's forms alike, as behind one proxy.
        "LIMELIGHT_SECRET_KEY": uuid.uuid4().hex,
        **(extra_env or {}),
    }
    servers: list[LiveServer] = []
    try:
        for name in ("a", "b"):
            servers.append(launch(data_dir / name, env))
    except BaseException:
        for server in servers:
            server.stop()
        stop_events()
        next(schemas, None)
        raise
    for server in servers:
        server.mode = "scaled"
    servers[-1].after_stop += [lambda: next(schemas, None), stop_events]
    return servers
