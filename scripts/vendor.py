"""The console's third-party front-end code: fetched from the npm registry, pinned by hash.

Each package in ``vendor.json`` names its version, the sha512 integrity of its
npm tarball, and the files taken from it with their sha256. The files are
committed, so serving the console never needs the network.

    python scripts/vendor.py               # fetch the pinned versions, check hashes, write files
    python scripts/vendor.py --check       # check the committed files against their pins (offline)
    python scripts/vendor.py --bump uplot 1.6.33   # fetch another version, re-pin its hashes, write

Fetching uses ``npm pack`` and so npm's configured registry; npm checks the
tarball against the registry's integrity, and this script against the pinned one.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "src" / "limelight" / "console" / "static" / "vendor"
MANIFEST = VENDOR / "vendor.json"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def load_manifest() -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads(MANIFEST.read_text())
    return manifest


def check_committed(manifest: dict[str, Any]) -> list[str]:
    """The committed files whose content is not what is pinned."""
    problems = []
    for name, package in manifest.items():
        for source, pin in package["files"].items():
            path = VENDOR / pin["to"]
            if not path.is_file():
                problems.append(f"{name}: {pin['to']} is missing")
            elif sha256(path.read_bytes()) != pin["sha256"]:
                problems.append(
                    f"{name}: {pin['to']} differs from {source} of {package['version']}"
                )
    return problems


def npm_pack(name: str, version: str, into: Path) -> bytes:
    """The package's tarball, as the registry npm is configured with serves it."""
    out = subprocess.run(
        ["npm", "pack", f"{name}@{version}", "--json", "--pack-destination", str(into)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"npm pack {name}@{version} failed:\n{out.stderr}")
    [packed] = json.loads(out.stdout)
    return (into / packed["filename"]).read_bytes()


def members(tarball: Path, wanted: list[str]) -> dict[str, bytes]:
    """The wanted files of an npm tarball (stored under ``package/``), read, never extracted."""
    found: dict[str, bytes] = {}
    with tarfile.open(tarball, "r:gz") as tar:
        for info in tar.getmembers():
            path = info.name.removeprefix("package/")
            if path in wanted and info.isfile():
                extracted = tar.extractfile(info)
                assert extracted is not None
                found[path] = extracted.read()
    missing = sorted(set(wanted) - set(found))
    if missing:
        raise SystemExit(f"{tarball.name} lacks {', '.join(missing)}")
    return found


def fetch(name: str, package: dict[str, Any], repin: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = npm_pack(name, package["version"], Path(tmp))
        if repin:
            package["integrity"] = integrity(data)
        elif integrity(data) != package["integrity"]:
            raise SystemExit(f"{name}@{package['version']}: the tarball is not the pinned one")
        tarball = Path(tmp) / "package.tgz"
        tarball.write_bytes(data)
        files = members(tarball, list(package["files"]))
    for source, content in files.items():
        pin = package["files"][source]
        if repin:
            pin["sha256"] = sha256(content)
        elif sha256(content) != pin["sha256"]:
            raise SystemExit(f"{name}: {source} is not the pinned file")
        target = VENDOR / pin["to"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        print(f"{name}@{package['version']}: {pin['to']} sha256 {pin['sha256']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="check the committed files only")
    parser.add_argument("--bump", nargs=2, metavar=("PACKAGE", "VERSION"))
    args = parser.parse_args(argv)
    manifest = load_manifest()
    if args.check:
        problems = check_committed(manifest)
        for problem in problems:
            print(problem)
        print("vendored files match their pins" if not problems else "vendored files differ")
        return 1 if problems else 0
    if args.bump:
        name, version = args.bump
        if name not in manifest:
            raise SystemExit(f"{name} is not vendored; add it to {MANIFEST.name} first")
        manifest[name]["version"] = version
        fetch(name, manifest[name], repin=True)
        MANIFEST.write_text(json.dumps(manifest, indent=2) + "\n")
        return 0
    for name, package in manifest.items():
        fetch(name, package, repin=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
