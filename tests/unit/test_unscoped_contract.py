"""The reads over every tenant's events (``store.events.unscoped``, and the transports'
classes, which offer them too) are out of reach of the API, the console, the runs and
the compiler: the import-linter contracts fail a copy of the package given such an
import, and keep it where they allow one."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import limelight

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = (
    "Unscoped reads: only the events store, backups and retention",
    "Only the store, backups and the backup command name the transports",
)
PROBE = (
    "from limelight.store.events.chdb_store import ChdbEventStore\n"
    "from limelight.store.events.unscoped import unscoped\n\n"
    "__all__ = ['ChdbEventStore', 'unscoped']\n"
)


def _status(report: str, contract: str) -> str | None:
    """KEPT or BROKEN, as lint-imports reports ``contract``."""
    found = re.search(re.escape(contract) + r"\s+(KEPT|BROKEN)\b", report)
    return found.group(1) if found else None


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
    assert [_status(out.stdout, contract) for contract in CONTRACTS] == ["BROKEN", "BROKEN"]
    for package in packages:  # named under each contract
        assert out.stdout.count(f"limelight.{package}.unscoped_probe") >= 2, out.stdout


def test_the_contract_keeps_an_import_where_it_is_allowed(tmp_path: Path) -> None:
    # The probe proves the copy is what lint-imports read: in the store it is allowed.
    out = _lint_with_probes(tmp_path, "store.events")
    assert out.returncode == 0, out.stdout
    assert [_status(out.stdout, contract) for contract in CONTRACTS] == ["KEPT", "KEPT"]
