"""`make bench`: start a real server, make a tenant, run the benchmark sections in order.

A section is a module of this package with ``run(ctx: BenchContext) -> None``
that prints its own table. Add one by naming it in ``SECTIONS``; a name whose
module does not exist yet is reported and skipped.

    .venv/bin/python bench/run.py [--sections ingest,queries] [--quick] [--repeats N]
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make `bench` and `tests` importable
    sys.path.insert(0, str(ROOT))

from tests.support import LiveServer, Tenant, launch  # noqa: E402

SECTIONS = [
    "ingest",
    "ingest_cpu",
    "ingest_pipeline",
    "ingest_table",
    "queries",
    "search",
    "investigate",
    "fresh_search",
    "storage",
    "otel",
    "shippers",
    "alerts",
    "console",
    "boards",
    "scale",
    "contention",
    "investigate_engine",
    "scope_guard",
]


@dataclass
class BenchContext:
    """What every section gets: a live server, a tenant on it, and the run's options."""

    server: LiveServer
    tenant: Tenant
    work_dir: Path  # scratch space that is removed after the run
    quick: bool
    repeats: int
    log: Callable[[str], None] = field(default=print)

    def scratch(self, name: str) -> Path:
        path = self.work_dir / name
        path.mkdir(parents=True, exist_ok=True)
        return path


def load_section(name: str) -> ModuleType | None:
    """The section's module, or None when it does not exist (yet)."""
    module_name = f"bench.{name}"
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise  # the section exists but needs something missing: a real error
        return None


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Limelight benchmarks.")
    parser.add_argument(
        "--sections",
        default=",".join(SECTIONS),
        help=f"comma-separated sections to run, in order (default: {','.join(SECTIONS)})",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument(
        "--repeats", type=int, default=None, help="repeats per measurement (default 3, quick 1)"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the scratch directory (server log, data)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    names = [n.strip() for n in args.sections.split(",") if n.strip()]
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        print(f"unknown sections: {', '.join(unknown)} (known: {', '.join(SECTIONS)})")
        return 2
    repeats = args.repeats or (1 if args.quick else 3)
    work_dir = Path(tempfile.mkdtemp(prefix="limelight-bench-"))
    server = launch(work_dir / "server")
    try:
        tenant = server.new_tenant()
        ctx = BenchContext(server, tenant, work_dir, args.quick, repeats)
        print(f"server {server.url} (data in {work_dir}), repeats={repeats}")
        print(f"{os.cpu_count()} cores, load average {_load()} (other processes skew figures)")
        for name in names:
            module = load_section(name)
            if module is None:
                print(f"\n[{name}] skipped: bench/{name}.py does not exist yet")
                continue
            print(f"\n[{name}]")
            started = time.perf_counter()
            module.run(ctx)
            print(f"[{name}] done in {time.perf_counter() - started:.1f}s")
        print(f"\nload average at the end {_load()}")
    finally:
        server.stop()
        if args.keep:
            print(f"kept {work_dir}")
        else:
            shutil.rmtree(work_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
