"""Secret values: typed prefixes, 256 bits of randomness, stored only as SHA-256."""

from __future__ import annotations

import base64
import hashlib

import pytest

from limelight.auth.secrets import SecretKind, display, hash_secret, kind_of, new_secret, same_hash


@pytest.mark.parametrize("kind", list(SecretKind))
def test_new_secrets_carry_their_prefix_and_256_random_bits(kind: SecretKind) -> None:
    value = new_secret(kind)
    assert value.startswith(kind.value)
    body = value.removeprefix(kind.value)
    assert len(base64.urlsafe_b64decode(body + "=")) == 32
    assert kind_of(value) is kind


def test_secrets_do_not_repeat() -> None:
    values = {new_secret(SecretKind.INGEST_KEY) for _ in range(1000)}
    assert len(values) == 1000


def test_the_stored_form_is_the_sha256_hex_and_not_the_value() -> None:
    value = new_secret(SecretKind.ADMIN_KEY)
    stored = hash_secret(value)
    assert stored == hashlib.sha256(value.encode()).hexdigest()
    assert value not in stored
    assert hash_secret(value) == stored


def test_same_hash_compares_whole_digests() -> None:
    a = hash_secret(new_secret(SecretKind.INGEST_KEY))
    b = hash_secret(new_secret(SecretKind.INGEST_KEY))
    assert same_hash(a, a)
    assert not same_hash(a, b)
    assert not same_hash(a, a[:-1])


@pytest.mark.parametrize("value", ["", "ll_", "pk_abc", "Bearer ll_pk_x", "LL_PK_abc"])
def test_values_without_a_known_prefix_have_no_kind(value: str) -> None:
    assert kind_of(value) is None


def test_an_access_token_is_never_taken_for_an_api_key() -> None:
    token = new_secret(SecretKind.ACCESS_TOKEN)
    assert kind_of(token) not in (SecretKind.INGEST_KEY, SecretKind.ADMIN_KEY)


def test_display_shows_prefix_and_last_four_only() -> None:
    value = new_secret(SecretKind.ADMIN_KEY)
    shown = display(value)
    assert shown == f"ll_sk_…{value[-4:]}"
    assert value[6:-4] not in shown
