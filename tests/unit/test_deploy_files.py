"""The deployment files name only settings and commands that exist: a renamed setting
or command would otherwise leave them silently configuring nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.main import get_command

from limelight.cli import app
from limelight.settings import Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
FILES = sorted(p for p in DEPLOY.rglob("*") if p.is_file())


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_setting_named_is_a_setting(path: Path) -> None:
    named = set(re.findall(r"\bLIMELIGHT_[A-Z_]+\b", path.read_text()))
    known = {f"LIMELIGHT_{name.upper()}" for name in Settings.model_fields}
    assert named, f"{path.name} names no setting"
    assert named <= known, sorted(named - known)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_command_run_is_a_command(path: Path) -> None:
    commands = get_command(app).commands  # type: ignore[attr-defined]
    run = re.findall(r"\blimelight (\w+)", path.read_text())
    assert run, f"{path.name} runs no limelight command"
    assert set(run) <= set(commands), sorted(set(run) - set(commands))
