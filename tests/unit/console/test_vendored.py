"""The vendored front-end files are the pinned ones, each package with its licence."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).parents[3] / "scripts" / "vendor.py"


def vendor_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vendor_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_vendored_file_has_its_pinned_sha256() -> None:
    vendor = vendor_script()
    assert vendor.check_committed(vendor.load_manifest()) == []


def test_every_vendored_package_is_pinned_to_a_version_with_its_licence() -> None:
    vendor = vendor_script()
    for name, package in vendor.load_manifest().items():
        assert package["version"].count(".") == 2, name
        assert package["integrity"].startswith("sha512-"), name
        assert "LICENSE" in package["files"], f"{name} is vendored without its licence"
