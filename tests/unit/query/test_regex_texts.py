"""A regex read as the few texts it finds (query.regex_texts), and which of those the
needle compiler answers from the indexes instead of testing the regex on raw."""

from __future__ import annotations

import random
import re

import pytest

from limelight.query.needle import DIGIT_RUNS, NUMBERS, needle_sql
from limelight.query.regex_texts import MAX_TEXTS, regex_texts
from limelight.query.spec import Needle
from limelight.query.sql import Params


@pytest.mark.parametrize(
    ("pattern", "texts"),
    [
        ("card_declined", ["card_declined"]),
        ("ERR-[0-9]+", [f"ERR-{d}" for d in range(10)]),
        (r"ERR-\d*", ["ERR-"]),  # absent at the end: dropped
        (r"5\d\d", [f"5{d}{e}" for d in range(10) for e in range(10)]),
        ("50[0-9]{1,3}", [f"50{d}" for d in range(10)]),  # at the end: its least
        ("a+b", ["ab"]),  # at the start too
        ("x?yz", ["yz"]),
        ("ab{2}c", ["abbc"]),
        (r"\(order [45]", ["(order 4", "(order 5"]),
        ("[a-c]x", ["ax", "bx", "cx"]),
        ("[]a]b", ["]b", "ab"]),
        ("[a-]b", ["ab", "-b"]),
        (r"[\d.]x", [*(f"{d}x" for d in range(10)), ".x"]),
    ],
)
def test_a_regex_of_literal_text_and_small_classes_is_its_texts(
    pattern: str, texts: list[str]
) -> None:
    assert regex_texts(pattern) == texts


@pytest.mark.parametrize(
    "pattern",
    [
        "a.b",  # any character
        "ab+c",  # a repeat between the ends
        "a[0-9]*b",
        "a|b",
        "(ab)",
        "^ab",
        "ab$",
        r"a\sb",
        r"a\wb",
        "[^a]b",
        "[[:digit:]]",
        "a{,2}",  # no repeat to RE2
        "a*",  # the empty text, which every event holds
        "[a-z]{3}",  # 17,576 texts: too many
        "a{300}",
        "[é]",  # past ASCII case folds further
        r"ab[\.-z]",  # a range from `.` to RE2, not `.`, `-` and `z`
        r"ab[\~-a]",  # a range RE2 refuses
        "abc{0,1001}",  # past RE2's 1,000 repeats, which it refuses
        "ab{1001}?",
    ],
)
def test_a_regex_this_does_not_read_is_left_to_the_engine(pattern: str) -> None:
    assert regex_texts(pattern) is None


def test_its_texts_are_found_exactly_where_the_regex_finds_a_match() -> None:
    rng = random.Random(7)
    alphabet = "ab0159-.("
    texts = ["".join(rng.choices(alphabet, k=rng.randrange(0, 12))) for _ in range(400)]
    patterns = [
        "a[0-9]+",
        r"b\d\d",
        "a+b",
        "-?[15]{2}",
        r"\(a[0-9]?",
        r"[ab]\.[0-9]*",
        "b{2}0+",
        "9",
    ]
    for pattern in patterns:
        found = regex_texts(pattern)
        assert found is not None and len(found) <= MAX_TEXTS
        for text in texts:
            assert (re.search(pattern, text) is not None) == any(t in text for t in found), (
                pattern,
                text,
            )


def _sql(value: str, match_case: bool = False) -> str:
    return needle_sql(Needle(value=value, isRegex=True, matchCase=match_case), Params())


def test_a_regex_whose_texts_the_indexes_answer_does_not_read_raw() -> None:
    # Each of `order 40` to `order 49` from the numbers index's dictionary, OR'ed.
    numbers = _sql("order 4[0-9]+")
    assert "raw, " not in numbers.replace(NUMBERS, "") and numbers.count(" OR ") == 9
    # Three digits: one lookup of their grams.
    assert _sql(r"50\d").startswith(f"hasAnyTokens({DIGIT_RUNS}")
    # Plain text: the needle it is.
    assert _sql("card_declined") == needle_sql(Needle(value="card_declined"), Params())
    assert _sql("Card_Declined", True) == needle_sql(
        Needle(value="Card_Declined", matchCase=True), Params()
    )
    # Without case RE2 finds `k` and `s` as the Kelvin sign and the long s too, which a
    # needle does not: read. With matchCase they are letters like others.
    assert "match(raw, " in _sql('"status":50[0-9]')
    assert "match(raw, " not in _sql('"status":50[0-9]', True)
    # One of its texts no index answers (digits after a letter): read.
    assert "match(raw, " in _sql("af[0-9]")
    # A hundred dictionary scans cost more than reading raw; a thousand grams do not.
    assert "match(raw, " in _sql("ERR-[0-9]{2}")
    assert _sql(r"\d{3}").startswith(f"hasAnyTokens({DIGIT_RUNS}")
