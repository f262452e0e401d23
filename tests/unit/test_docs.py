"""The README stays true to the code: every setting and the query semantics."""

from __future__ import annotations

import re
from pathlib import Path

import limelight.query
from limelight.settings import Settings

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text()


def semantics_markdown() -> str:
    """The semantics table of ``limelight.query`` as the README prints it."""
    doc = limelight.query.__doc__ or ""
    body = doc.split("Query semantics\n===============\n", 1)[1].replace("``", "`")
    return re.sub(r"\n(\w[^\n]*)\n-+\n", r"\n#### \1\n", body).strip()


def test_every_setting_is_documented() -> None:
    missing = [
        f"LIMELIGHT_{name.upper()}"
        for name in Settings.model_fields
        if f"`LIMELIGHT_{name.upper()}`" not in README
    ]
    assert missing == [], f"add these settings to the README's Settings table: {missing}"


def _names(paths: list[Path]) -> dict[str, list[str]]:
    """Each ``LIMELIGHT_*`` name written in these files (or the files below these
    folders), with the files that write it."""
    found: dict[str, list[str]] = {}
    files = [f for p in paths for f in ([p] if p.is_file() else sorted(p.rglob("*")))]
    for file in files:
        if file.is_file() and file.suffix in (".md", ".html", ".py", ".js", ".yml", ".yaml", ""):
            for name in set(re.findall(r"LIMELIGHT_[A-Z0-9_]*[A-Z0-9]", file.read_text())):
                found.setdefault(name, []).append(str(file.relative_to(ROOT)))
    return found


def test_the_docs_name_only_settings_that_exist() -> None:
    """The README, the architecture, the console (/docs among its pages) and the OpenAPI
    document name settings that exist; or a variable the tests, benchmarks or
    scripts read (``LIMELIGHT_TEST_CLICKHOUSE_URL``), which the README documents too; or
    one the developer's commands read to find a server (``LIMELIGHT_URL``, ``cli/remote.py``)."""
    settings = {f"LIMELIGHT_{name.upper()}" for name in Settings.model_fields}
    remote = ROOT / "src/limelight/cli/remote.py"
    read_elsewhere = _names([ROOT / "tests", ROOT / "bench", ROOT / "scripts", remote])
    read_elsewhere = {n: f for n, f in read_elsewhere.items() if f != ["tests/unit/test_docs.py"]}
    docs = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", ROOT / "deploy"]
    # The API's docs live beside its routes.
    docs += [ROOT / "src/limelight/console", ROOT / "src/limelight/api"]
    named = _names(docs)
    unknown = {n: f for n, f in named.items() if n not in settings and n not in read_elsewhere}
    assert unknown == {}, "these name no setting (see settings.py)"


def test_readme_query_semantics_match_the_compiler_docs() -> None:
    expected = semantics_markdown()
    assert expected in README, (
        "README's 'Query semantics' differs from limelight/query/__init__.py; "
        "paste this under '### Query semantics':\n\n" + expected
    )
