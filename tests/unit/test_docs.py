"""The README stays true to the code: every setting and the query semantics."""

from __future__ import annotations

import re
from pathlib import Path

import limelight.query
from limelight.settings import Settings

README = (Path(__file__).parents[2] / "README.md").read_text()


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


def test_readme_query_semantics_match_the_compiler_docs() -> None:
    expected = semantics_markdown()
    assert expected in README, (
        "README's 'Query semantics' differs from limelight/query/__init__.py; "
        "paste this under '### Query semantics':\n\n" + expected
    )
