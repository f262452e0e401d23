"""The one-line rule of names and titles: what breaks a line or drives a terminal is
refused, what only orders a line written right to left is kept."""

from __future__ import annotations

import pytest

from limelight.validation import has_control, line_problem, one_line

BREAKING = [
    "\x00",  # PostgreSQL's text holds none
    "\n",
    "\x1b",  # ESC
    "\x7f",  # DEL
    "\x80",
    "\x85",  # NEL: a line break
    "\x9b",  # CSI: ESC [ in one character
    "\x9f",
    "\u2028",  # line separator
    "\u2029",  # paragraph separator
]
# The reordering marks (embeddings, overrides, isolates): the lists show them as codes.
KEPT = ["\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2069", "é"]


@pytest.mark.parametrize("char", BREAKING, ids=[f"U+{ord(c):04X}" for c in BREAKING])
def test_a_character_that_breaks_a_line_or_drives_a_terminal_is_refused(char: str) -> None:
    name = f"checkout{char}errors"
    assert has_control(name)
    assert line_problem(name, 200) == "must be one line, without control characters"
    with pytest.raises(ValueError, match="must be one line"):
        one_line(name)


@pytest.mark.parametrize("char", KEPT, ids=[f"U+{ord(c):04X}" for c in KEPT])
def test_a_name_written_right_to_left_is_one_line(char: str) -> None:
    name = f"checkout{char}errors"
    assert not has_control(name)
    assert line_problem(name, 200) is None
    assert one_line(name) == name


def test_a_name_too_long_is_refused_saying_its_length() -> None:
    assert line_problem("x" * 201, 200) == "one line of at most 200 characters; 201 given"
