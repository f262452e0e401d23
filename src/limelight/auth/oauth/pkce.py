"""PKCE (RFC 7636), S256 only: ``plain`` protects nothing once the challenge leaks."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

# 43 to 128 characters of the unreserved set (RFC 7636 4.1 and 4.2), matched whole: `$`
# also matches before a final line break, so a challenge ending in one was taken and no
# verifier could ever match it.
_SHAPE = re.compile(r"[A-Za-z0-9\-._~]{43,128}")


def valid_challenge(challenge: str) -> bool:
    return bool(_SHAPE.fullmatch(challenge))


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def verifier_matches(verifier: str, challenge: str) -> bool:
    if not _SHAPE.fullmatch(verifier):
        return False
    return hmac.compare_digest(s256(verifier), challenge)
