"""The needle's compiler: which text a regex requires, and the phrases index's expression
as its DDL states it."""

from __future__ import annotations

from importlib import resources

import pytest

from limelight.query.needle import PHRASES, WORDS, regex_literals


@pytest.mark.parametrize(
    ("pattern", "literals"),
    [
        ("payment failed", ["payment failed"]),
        (r"issuer \(order \d+\)", []),  # \d: unsure past it, so nothing
        (r"issuer \(order [0-9]+\)", ["issuer (order ", ")"]),
        ("card_dec[a-z]+ed", ["card_dec", "ed"]),
        ("colou?r", ["colo", "r"]),
        ("ab*c", ["a", "c"]),
        ("ab+c", ["ab", "c"]),
        ("ab{2,3}c", ["a", "c"]),
        ("ab+?c", ["ab", "c"]),
        ("a.b", ["a", "b"]),
        ("^start$", ["start"]),
        ("(?i)card_DECLINED", ["card_DECLINED"]),
        ("order (12|34) done", ["order ", " done"]),
        ("(a|b)?x", ["x"]),
        ("x(abc)*y", ["x", "y"]),
        ("timeout|declined", []),
        ("[a|b]c", ["c"]),
        ("[]a]b", ["b"]),
        ("[[:alpha:]]x", []),
        ("/api/{id}", []),
        ("a)b", []),
        ("unclosed (group", []),
        (r"\Qa.b\E", []),
        (r"a\.b", ["a.b"]),
    ],
)
def test_regex_literals_are_the_text_every_match_holds(pattern: str, literals: list[str]) -> None:
    assert regex_literals(pattern) == literals


def ddl_text(version: int) -> str:
    folder = resources.files("limelight.store.events") / "ddl"
    [entry] = [e for e in folder.iterdir() if e.name.startswith(f"{version:04d}_")]
    return entry.read_text()


def test_the_indexes_expressions_are_those_their_ddl_states() -> None:
    # The engine uses an index only for the very expression it was declared on.
    assert f"raw_words {WORDS} TYPE" in ddl_text(11)
    assert f"raw_phrases {PHRASES} TYPE" in ddl_text(15)
