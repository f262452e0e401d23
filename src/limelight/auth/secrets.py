"""Secret values: 256-bit random with a readable type prefix, stored as SHA-256.

The prefix says what a value is, so an access token can never pass as an API
key and the other way round, and a leaked value is recognisable in logs and by
secret scanners. A slow hash buys nothing at 256 bits of entropy; passwords,
which people choose, use argon2id instead (``auth.passwords``).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from enum import StrEnum


class SecretKind(StrEnum):
    INGEST_KEY = "ll_pk_"  # public: may only send events
    ADMIN_KEY = "ll_sk_"  # secret: may use the Queries API
    CLIENT_SECRET = "ll_cs_"
    AUTH_CODE = "ll_ac_"
    ACCESS_TOKEN = "ll_at_"
    REFRESH_TOKEN = "ll_rt_"
    SESSION = "ll_ss_"
    WEBHOOK_SECRET = "ll_ws_"  # signs an alert's webhooks (HMAC), so kept as is


def new_secret(kind: SecretKind) -> str:
    return kind.value + secrets.token_urlsafe(32)


def hash_secret(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def kind_of(value: str) -> SecretKind | None:
    for kind in SecretKind:
        if value.startswith(kind.value):
            return kind
    return None


def same_hash(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def display(value: str) -> str:
    """What may be shown after creation: the prefix and the last 4 characters."""
    kind = kind_of(value)
    prefix = kind.value if kind else value[:3]
    return f"{prefix}…{value[-4:]}"
