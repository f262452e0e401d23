"""The fork server starts commands as ``python -m`` does: their own process, streams,
environment, directory and exit code (tests/forkserver.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests import forkserver


@pytest.fixture(autouse=True)
def _forked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LIMELIGHT_TEST_EXEC", raising=False)


def _run(
    module: str,
    args: list[str],
    given: bytes = b"",
    env: dict[str, str] | None = None,
    cwd: Path = forkserver.ROOT,
) -> tuple[int, str, str]:
    proc, code, out, err = forkserver.run(module, args, env or dict(os.environ), given, cwd, 60)
    assert isinstance(proc, forkserver.ForkedProcess)
    return code, out, err


def test_a_command_reads_its_stdin_and_writes_its_stdout() -> None:
    code, out, err = _run("json.tool", ["--compact"], b'{"a": [1, 2]}')
    assert (code, json.loads(out), err) == (0, {"a": [1, 2]}, "")


def test_a_failing_command_answers_its_exit_code_and_its_stderr() -> None:
    code, out, err = _run("json.tool", [], b"{not json")
    assert code == 1
    assert out == ""
    assert "Expecting property name" in err


def test_the_command_line_runs_with_its_arguments_environment_and_directory(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "LIMELIGHT_DATA_DIR": str(tmp_path / "data")}
    code, out, err = _run("limelight", ["bootstrap", "--json"], env=env, cwd=tmp_path)
    assert code == 0, err
    made = json.loads(out)
    assert made["ingestKey"].startswith("ll_pk_")
    assert (tmp_path / "data" / "meta.db").exists()


def test_a_signal_ends_the_process_as_it_ends_a_popen_one(tmp_path: Path) -> None:
    proc = forkserver.start(
        "http.server", ["--bind", "127.0.0.1", "0"], dict(os.environ),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path,
    )  # fmt: skip
    assert proc.poll() is None
    assert proc.pid != os.getpid()
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(0.2)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == -signal.SIGTERM
    proc.kill()  # known to have exited: no signal goes to a pid that may be another's
