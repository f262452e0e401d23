"""Server and command processes forked from one that has imported the server's code.

A test process starts ``limelight serve`` (and the other commands that need a process of
their own) about a hundred times a run. Each start paid Python's import of the app,
1.3-1.4 s of CPU on the suite's two cores, before doing anything the test is about. A
fork server imports it once per test process; a start is then a fork of that process
in which the command runs as ``python -m`` runs it (``runpy``, the same ``__main__``),
with the test's arguments, environment, working directory and standard streams.

What the test gets is a real process of its own: the same code from the same files, its
own pid, signals and exit code (a ``ForkedProcess`` answers as much of ``Popen`` as the
tests use). Two things keep the fork sound:
- the fork server holds one thread (checked at start): a fork copies only the thread
  that calls it, and a lock another thread held would stay locked in the child;
- it imports nothing that starts threads or opens files the child would share: chDB
  starts thirteen threads when imported, so the engine is imported after the fork, in
  the server process itself.

The standard library's ``multiprocessing`` forkserver runs Python functions, not
commands with their own streams and exit codes, so this is written here. Set
LIMELIGHT_TEST_EXEC=1 to start every process with ``subprocess`` instead; the tests of
the command line itself (``tests/e2e/test_cli.py``) always do.
"""

from __future__ import annotations

import array
import atexit
import contextlib
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
# What a fork server imports before forking, besides every module of limelight: what a
# server's start imports later (migrations, the event loop, the HTTP protocol). Not chDB,
# numpy or pyarrow, which start threads.
PRELOAD = (
    "alembic.command",
    "alembic.config",
    "alembic.runtime.migration",
    "alembic.script",
    "alembic.autogenerate",
    "mako.template",
    "uvicorn.loops.uvloop",
    "uvicorn.protocols.http.httptools_impl",
    "uvicorn.protocols.websockets.auto",
    "uvicorn.lifespan.on",
    "anyio._backends._asyncio",
    "tomllib",
)
_MAX_MESSAGE = 1 << 20


def _send(sock: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode()
    if fds:
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.send(data)


# --- the fork server's side ---------------------------------------------------------


def _run_in_child(request: dict[str, Any], fds: list[int]) -> int:
    """Become the requested command: its streams, directory, environment and argv."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in set(fds):
        if fd > 2:
            os.close(fd)
    # sys.stdin, stdout and stderr wrap descriptors 0-2, which are the command's now.
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    import tempfile

    tempfile.tempdir = None  # found again from the command's TMPDIR, if asked
    sys.argv = [request["module"], *request["args"]]
    import runpy

    try:
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            code = stop.code or 0
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    return code


def _serve(control: socket.socket) -> None:
    import importlib
    import pkgutil

    import limelight

    for module in pkgutil.walk_packages(limelight.__path__, "limelight."):
        if not module.name.endswith("__main__"):  # __main__ runs the CLI when imported
            importlib.import_module(module.name)
    for name in PRELOAD:
        importlib.import_module(name)
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:
        raise SystemExit(
            f"the fork server holds {threads} threads after its imports; it must hold one"
        )
    wake_r, wake_w = socket.socketpair()
    wake_r.setblocking(False)
    wake_w.setblocking(False)
    signal.set_wakeup_fd(wake_w.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ, "control")
    selector.register(wake_r, selectors.EVENT_READ, "wake")
    _send(control, {"ready": os.getpid()})
    while True:
        for key, _ in selector.select():
            if key.data == "wake":
                with contextlib.suppress(BlockingIOError):
                    wake_r.recv(4096)
                _reap(control)
                continue
            fds: list[int] = []
            data, ancillary, _, _ = control.recvmsg(_MAX_MESSAGE, socket.CMSG_SPACE(3 * 4))
            if not data:
                return  # the test process is gone
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.extend(array.array("i", payload[: len(payload) - len(payload) % 4]))
            request = json.loads(data)
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    selector.close()
                    for sock in (control, wake_r, wake_w):
                        sock.close()
                    code = _run_in_child(request, fds)
                finally:
                    os._exit(code)
            for fd in fds:
                os.close(fd)
            _send(control, {"spawned": request["id"], "pid": pid})
        _reap(control)


def _reap(control: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _send(control, {"exited": pid, "code": os.waitstatus_to_exitcode(status)})


# --- the test process's side --------------------------------------------------------


class ForkedProcess:
    """A process the fork server started, answering as ``subprocess.Popen`` does."""

    def __init__(self, server: _ForkServer, pid: int, args: list[str]) -> None:
        self._server = server
        self.pid = pid
        self.args = args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._server.exit_code(self.pid, timeout=0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            code = self._server.exit_code(self.pid, timeout)
            if code is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self.returncode = code
        return self.returncode

    def send_signal(self, sig: int) -> None:
        # As Popen: never signal a pid once its exit is known (it may be another's now).
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class _ForkServer:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._sock = ours
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.forkserver", str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        self._changed = threading.Condition()
        self._exits: dict[int, int] = {}
        self._spawned: dict[int, int] = {}
        self._next_id = 0
        self._send_lock = threading.Lock()
        self._alive = True
        first = json.loads(self._sock.recv(_MAX_MESSAGE) or b"{}")
        if "ready" not in first:
            raise RuntimeError("the fork server did not start")
        threading.Thread(target=self._read, name="forkserver-reader", daemon=True).start()
        atexit.register(self.close)

    def _read(self) -> None:
        while True:
            try:
                data = self._sock.recv(_MAX_MESSAGE)
            except OSError:
                data = b""
            with self._changed:
                if not data:
                    self._alive = False
                    self._changed.notify_all()
                    return
                message = json.loads(data)
                if "spawned" in message:
                    self._spawned[message["spawned"]] = message["pid"]
                else:
                    self._exits[message["exited"]] = message["code"]
                self._changed.notify_all()

    def spawn(
        self, module: str, args: list[str], env: dict[str, str], cwd: Path, streams: list[int]
    ) -> ForkedProcess:
        with self._send_lock:
            self._next_id += 1
            request_id = self._next_id
            request = {
                "id": request_id,
                "module": module,
                "args": args,
                "env": env,
                "cwd": str(cwd),
            }
            _send(self._sock, request, streams)
        with self._changed:
            if not self._changed.wait_for(
                lambda: request_id in self._spawned or not self._alive, timeout=30
            ):
                raise RuntimeError("the fork server did not answer")
            if request_id not in self._spawned:
                raise RuntimeError("the fork server exited")
            pid = self._spawned.pop(request_id)
        return ForkedProcess(self, pid, [module, *args])

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        with self._changed:
            self._changed.wait_for(lambda: pid in self._exits or not self._alive, timeout)
            return self._exits.get(pid)

    @property
    def alive(self) -> bool:
        return self._alive and self._proc.poll() is None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(5)


# What ``start`` returns: either answers what the tests ask of a process.
Process = subprocess.Popen[bytes] | ForkedProcess

_server: _ForkServer | None = None
_server_pid = 0
_start_lock = threading.Lock()


def _fork_server() -> _ForkServer:
    global _server, _server_pid
    with _start_lock:
        if _server is None or _server_pid != os.getpid() or not _server.alive:
            _server, _server_pid = _ForkServer(), os.getpid()
        return _server


def start(
    module: str,
    args: list[str],
    env: dict[str, str],
    *,
    stdin: int | IO[Any] | None = None,
    stdout: int | IO[Any] | None = None,
    stderr: int | IO[Any] | None = None,
    cwd: Path = ROOT,
) -> Process:
    """``python -m module args`` in a process of its own, forked from the fork server
    (``subprocess.Popen`` under LIMELIGHT_TEST_EXEC=1). Streams are files, file
    descriptors or ``subprocess.STDOUT`` for stderr; None inherits this process's."""
    if os.environ.get("LIMELIGHT_TEST_EXEC") == "1":
        return subprocess.Popen(
            [sys.executable, "-m", module, *args],
            env=env,
            cwd=cwd,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
        )
    with contextlib.ExitStack() as opened:
        fds = []
        for n, stream in enumerate((stdin, stdout, stderr)):
            if stream is None:
                fds.append(n)
            elif stream == subprocess.STDOUT:
                fds.append(fds[1])
            elif stream == subprocess.DEVNULL:
                fds.append(opened.enter_context(open(os.devnull, "r+b")).fileno())  # noqa: SIM115
            elif isinstance(stream, int):
                fds.append(stream)
            else:
                fds.append(stream.fileno())
        return _fork_server().spawn(module, args, env, cwd, fds)


def run(
    module: str,
    args: list[str],
    env: dict[str, str],
    given: bytes = b"",
    cwd: Path = ROOT,
    timeout: float | None = None,
) -> tuple[Process, int, str, str]:
    """``start`` with ``given`` as its stdin, waited for: the process, its exit code and
    what it wrote to stdout and stderr (through files: a pipe the test did not read
    could fill and stall it)."""
    with (
        tempfile.TemporaryFile() as stdin,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
    ):
        stdin.write(given)
        stdin.seek(0)
        proc = start(module, args, env, stdin=stdin, stdout=out, stderr=err, cwd=cwd)
        code = proc.wait(timeout)
        out.seek(0)
        err.seek(0)
        return proc, code, out.read().decode(), err.read().decode()


if __name__ == "__main__":
    _serve(socket.socket(fileno=int(sys.argv[1])))
