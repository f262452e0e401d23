"""Replacing the values of keys that obviously hold secrets."""

from __future__ import annotations

import re
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

# Cheap test on the whole body: when none of these appear anywhere, no event
# can hold a secret key and the per-event walk is skipped.
BODY_HINT = re.compile(
    rb"(?i)pass|pwd|secret|auth|api.?key|token|cookie|session|private|credential"
)


def is_secret_key(key: str) -> bool:
    norm = key.lower().replace("-", "_").replace(".", "_")
    return norm in _EXACT or norm.endswith(_SUFFIXES)


def redact(value: Any) -> bool:
    """Redact in place, at any depth; True when something was replaced."""
    changed = False
    if isinstance(value, dict):
        for key, inner in value.items():
            if is_secret_key(key) and inner is not None and inner != REDACTED:
                value[key] = REDACTED
                changed = True
            elif isinstance(inner, dict | list):
                changed = redact(inner) or changed
    elif isinstance(value, list):
        for inner in value:
            if isinstance(inner, dict | list):
                changed = redact(inner) or changed
    return changed
