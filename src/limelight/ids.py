"""Identifiers: short, random, URL-safe, sortable by creation time."""

from __future__ import annotations

import secrets
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lower case


def _b32(value: int, width: int) -> str:
    out = []
    for _ in range(width):
        out.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(out))


def new_id(random_chars: int = 10) -> str:
    """A ULID-like id: 9 chars of milliseconds, then random chars (50 bits by default)."""
    ms = int(time.time() * 1000)
    return _b32(ms, 9) + _b32(secrets.randbits(5 * random_chars), random_chars)


def id_floor(ms: int) -> str:
    """An id below every id made at or after ``ms``: ids compare as text in the order
    they were made (to the millisecond), so this marks a moment among them."""
    return _b32(ms, 9)
