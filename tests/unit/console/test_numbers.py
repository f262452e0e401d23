"""Whole numbers typed into the console: ASCII digits only, and not too many."""

from __future__ import annotations

import pytest

from limelight.console.numbers import ascii_whole


@pytest.mark.parametrize(
    ("text", "most", "read"),
    [
        ("42", 6, 42),
        (" 007 ", 6, 7),
        ("123456", 6, 123456),
        ("1234567", 6, None),  # more digits than asked for
        ("9" * 5000, 16, None),  # past what int() converts: was a 500
        ("\u00b2", 6, None),  # a superscript two: isdigit() takes it, int() does not
        ("\u2460", 6, None),  # a circled one
        ("\u0663", 6, None),  # an Arabic-Indic three, which int() would read
        ("-1", 6, None),
        ("1.5", 6, None),
        ("", 6, None),
    ],
)
def test_only_ascii_digits_of_at_most_the_length_asked_are_read(
    text: str, most: int, read: int | None
) -> None:
    assert ascii_whole(text, most) == read
