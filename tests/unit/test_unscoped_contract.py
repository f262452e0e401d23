"""The reads over every tenant's events (``store.events.unscoped``) are out of reach of the
API, the console, the runs and the compiler: the import-linter contract fails a copy of
the package given such an import, and keeps it where the contract allows one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import limelight

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = "Unscoped reads only where they belong"
PROBE = "from limelight.store.events.unscoped import unscoped\n\n__all__ = ['unscoped']\n"


def _lint_with_probes(tmp_path: Path, *packages: str) -> subprocess.CompletedProcess[str]:
    """lint-imports over a copy of the package with one more module in each of
    ``packages`` that imports the unscoped reads."""
    source = Path(limelight.__file__).parent
    copy = tmp_path / "limelight"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("static", "__pycache__"))
    for package in packages:
        (copy / package.replace(".", "/") / "unscoped_probe.py").write_text(PROBE)
    lint = Path(sys.executable).parent / "lint-imports"
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    return subprocess.run(
        [str(lint), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )


def test_the_contract_breaks_when_a_tenant_facing_layer_imports_the_unscoped_reads(
    tmp_path: Path,
) -> None:
    packages = ["api", "console", "runs", "query", "alerts", "ingest"]
    out = _lint_with_probes(tmp_path, *packages)
    assert out.returncode != 0
    broken = [line for line in out.stdout.splitlines() if line.startswith(CONTRACT)]
    assert broken and broken[0].endswith("BROKEN"), out.stdout
    for package in packages:
        assert f"limelight.{package}.unscoped_probe" in out.stdout


def test_the_contract_keeps_an_import_where_it_is_allowed(tmp_path: Path) -> None:
    # The probe proves the copy is what lint-imports read: in the store it is allowed.
    out = _lint_with_probes(tmp_path, "store.events")
    assert out.returncode == 0, out.stdout
    assert f"{CONTRACT}: the events store, backups and retention KEPT" in out.stdout
