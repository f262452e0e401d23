"""The README's first steps, pasted in order into a shell against a live server (with a
data directory of its own): each block prints what its comments say it prints."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.support import launch

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
ADDRESS = "http://127.0.0.1:8000"


def first_steps() -> list[str]:
    """The shell blocks of the section "First steps", in order."""
    section = README.split("### First steps\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


def expected(block: str) -> str:
    """A pattern of what the block prints: its comment lines, ``...`` standing for anything."""
    lines = [line[2:] for line in block.splitlines() if line.startswith("# ")]
    return "\n".join(".*?".join(re.escape(part) for part in line.split("...")) for line in lines)


def test_the_first_steps_name_the_server_once() -> None:
    """Another port is one edit: the address is set once, as ``$BASE``, and used as such."""
    blocks = "\n".join(first_steps())
    assert blocks.count(ADDRESS) == 1
    assert f"BASE={ADDRESS}" in blocks
    assert "127.0.0.1" not in blocks.replace(f"BASE={ADDRESS}", "")


def test_the_first_steps_work_when_pasted_in_order(tmp_path: Path) -> None:
    blocks = first_steps()
    assert len(blocks) == 5 and all(expected(block) for block in blocks)
    server = launch(tmp_path / "data")
    try:
        # One shell for all blocks, as a person pastes them: variables carry over.
        marker = "----- next block -----"
        script = f"\necho '{marker}'\n".join(block.replace(ADDRESS, server.url) for block in blocks)
        env = {**os.environ, "LIMELIGHT_DATA_DIR": str(server.data_dir)}
        out = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    finally:
        server.stop()
    assert out.returncode == 0, out.stderr
    printed = out.stdout.split(f"{marker}\n")
    assert len(printed) == len(blocks)
    for block, output in zip(blocks, printed, strict=True):
        assert re.fullmatch(expected(block), output.strip(), re.S), (block, output)
