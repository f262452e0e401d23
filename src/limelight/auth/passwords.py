"""Human passwords: argon2id with OWASP's parameters (m=19 MiB, t=2, p=1).

People choose passwords, so unlike our 256-bit secrets they need a slow,
salted, memory-hard hash.
"""

from __future__ import annotations

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError

from limelight.errors import InvalidValue

MIN_LENGTH = 10
MAX_LENGTH = 1024  # argon2 takes any length; a cap keeps one request cheap

_hasher = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1, type=Type.ID)
# Verified against when the email is unknown, so a miss costs as long as a hit
# and response times do not reveal which accounts exist. Written out rather than
# hashed at import: that cost every process 25 ms (the CLI, each server worker),
# and a test holds it to the parameters above (needs_rehash is False).
_DUMMY_HASH = (
    "$argon2id$v=19$m=19456,t=2,p=1$q+1N0Wh6F1zfOBvebWsv5A"
    "$f/iTBSugnNmyxgdQfBP6DMryn4X0NEDu6Pu77Isfo04"
)


class WeakPassword(InvalidValue):
    """A password too short or too long; the message says which."""


def check_strength(password: str) -> None:
    if len(password) < MIN_LENGTH:
        raise WeakPassword(f"a password needs at least {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise WeakPassword(f"a password has at most {MAX_LENGTH} characters")


def hash_password(password: str) -> str:
    check_strength(password)
    return _hasher.hash(password)


def verify_password(stored_hash: str | None, password: str) -> bool:
    """True when ``password`` matches; ``stored_hash=None`` spends the same time and fails."""
    if len(password) > MAX_LENGTH:
        return False
    try:
        # Only a missing hash gets the dummy: an empty one is malformed and fails.
        _hasher.verify(_DUMMY_HASH if stored_hash is None else stored_hash, password)
    except (VerificationError, InvalidHashError):
        return False
    return stored_hash is not None


def needs_rehash(stored_hash: str) -> bool:
    return _hasher.check_needs_rehash(stored_hash)
