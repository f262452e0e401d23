"""Whole numbers typed into the console's addresses and forms."""

from __future__ import annotations


def ascii_whole(text: str, most_digits: int) -> int | None:
    """The number ``text`` writes in at most ``most_digits`` ASCII digits, else None.

    ``str.isdigit`` alone also takes ``²`` and ``①``, which ``int`` refuses, and any
    number of digits, of which ``int`` converts at most 4,300: both answered 500.
    """
    text = text.strip()
    if text.isascii() and text.isdigit() and len(text) <= most_digits:
        return int(text)
    return None
