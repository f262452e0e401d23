from __future__ import annotations

import pytest

from limelight.auth.passwords import WeakPassword, hash_password, needs_rehash, verify_password


def test_argon2id_with_owasp_parameters() -> None:
    stored = hash_password("correct horse battery")
    assert stored.startswith("$argon2id$")
    assert "m=19456,t=2,p=1" in stored
    assert not needs_rehash(stored)
    assert hash_password("correct horse battery") != stored  # salted


def test_verify() -> None:
    stored = hash_password("correct horse battery")
    assert verify_password(stored, "correct horse battery")
    assert not verify_password(stored, "correct horse batterY")
    assert not verify_password(None, "correct horse battery")  # unknown user
    assert not verify_password("not a hash", "correct horse battery")
    assert not verify_password(stored, "x" * 5000)


@pytest.mark.parametrize("password", ["", "short", "x" * 1025])
def test_weak_passwords_are_refused(password: str) -> None:
    with pytest.raises(WeakPassword):
        hash_password(password)
