"""Replacing the values of keys that obviously hold secrets."""

from __future__ import annotations

from typing import Any

REDACTED = "[REDACTED]"

_EXACT = frozenset(
    {
        "password", "passwd", "pwd", "secret", "authorization", "x_api_key", "api_key", "apikey",
        "access_token", "refresh_token", "id_token", "token", "auth_token", "cookie",
        "set_cookie", "session_id", "sessionid", "private_key", "client_secret", "credentials",
        "x_auth_token", "proxy_authorization",
    }
)  # fmt: skip
_SUFFIXES = ("password", "passwd", "secret", "token", "apikey", "api_key", "cookie")

# Pieces of every key that ``is_secret_key`` accepts, after the same folding
# (lower case, '-' and '.' as '_'). When none appears in a body, no event in it
# can hold a secret key and the per-event walk is skipped. A JSON escape could
# spell a key without these bytes (p\u0061ssword), so a body with escapes is walked.
# `api"` is a key "api" that a "key" inside it makes "api_key" (``redact``).
BODY_HINTS = (
    b"pass", b"pwd", b"secret", b"auth", b"token", b"cookie", b"session", b"private",
    b"credential", b"apikey", b"api_key", b'api"', b"\\u",
)  # fmt: skip
# In protobuf a key is followed by the next field's tag, not a quote, so the key "api"
# is its bare name there; and protobuf strings have no escapes.
PROTOBUF_HINTS = tuple(b"api" if h == b'api"' else h for h in BODY_HINTS if h != b"\\u")
_FOLD_BYTES = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ-.", b"abcdefghijklmnopqrstuvwxyz__")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def may_hold_secrets(body: bytes, hints: tuple[bytes, ...] = BODY_HINTS) -> bool:
    """False when no event in this body (JSON, or protobuf with ``PROTOBUF_HINTS``) can
    have a key that ``redact`` replaces."""
    folded = body.translate(_FOLD_BYTES)
    return any(hint in folded for hint in hints)


def is_secret_key(key: str) -> bool:
    # ASCII-only lower-casing, like bytes.lower() in ``may_hold_secrets``: str.lower()
    # would also turn the Kelvin sign into a 'k' that the body test cannot see.
    norm = key.lower() if key.isascii() else key.translate(_ASCII_LOWER)
    norm = norm.replace("-", "_").replace(".", "_")
    return norm in _EXACT or norm.endswith(_SUFFIXES)


def redact(value: Any) -> bool:
    """Redact in place, at any depth; True when something was replaced.

    A loop over the containers still to visit, not recursion: an OTLP attribute
    key with thousands of dots nests as many levels, beyond Python's recursion limit.
    """
    changed = False
    # Each container with the key it is the value of (a list's items share it): a key
    # nested under another is also read joined to it, so {"api": {"key": ...}} is
    # "api_key" as {"api.key": ...} is, and an OTLP attribute "session.id", which
    # arrives split at its dots, is "session_id" as in the Events API.
    pending: list[tuple[Any, str | None]] = [(value, None)]
    while pending:
        node, parent = pending.pop()
        if isinstance(node, dict):
            for key, inner in node.items():
                secret = is_secret_key(key) or (
                    parent is not None and is_secret_key(f"{parent}_{key}")
                )
                if secret and inner is not None and inner != REDACTED:
                    node[key] = REDACTED
                    changed = True
                elif isinstance(inner, dict | list):
                    pending.append((inner, key))
        elif isinstance(node, list):
            pending.extend((inner, parent) for inner in node if isinstance(inner, dict | list))
    return changed
