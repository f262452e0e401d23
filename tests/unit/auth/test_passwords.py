from __future__ import annotations

import pytest

from limelight.auth.passwords import (
    _DUMMY_HASH,
    WeakPassword,
    hash_password,
    needs_rehash,
    verify_password,
)


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


def test_an_unknown_user_costs_a_verification_with_todays_parameters() -> None:
    # The hash checked when no account matches: as slow as a member's, so an
    # answer's time does not tell which emails have accounts. A malformed one would
    # be refused at once, without the work (and verify_password(None, ...) still fails).
    assert not needs_rehash(_DUMMY_HASH)
    assert verify_password(_DUMMY_HASH, "not a real password, only here for the timing")
    assert not verify_password("", "not a real password, only here for the timing")


@pytest.mark.parametrize("password", ["", "short", "x" * 1025])
def test_weak_passwords_are_refused(password: str) -> None:
    with pytest.raises(WeakPassword):
        hash_password(password)
