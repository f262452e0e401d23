"""Sealing with the installation's key: what one key seals, another does not open; the
history of a check keeps a destination's URL sealed and survives a dropped key."""

from __future__ import annotations

import pytest

from limelight.auth.alert_secrets import (
    UNREADABLE_TARGET,
    open_delivery,
    seal_delivery,
)
from limelight.auth.sealing import Sealer, SecretUnreadable

NEW, OLD = b"new-secret-key-" + b"n" * 32, b"old-secret-key-" + b"o" * 32


def sealer(*keys: bytes) -> Sealer:
    return Sealer(lambda: keys)


def test_a_token_opens_with_its_key_or_a_previous_one_only() -> None:
    token = sealer(OLD).seal("https://hooks.slack.com/services/T/B/x")
    assert "hooks.slack.com" not in token
    assert sealer(NEW, OLD).open(token) == "https://hooks.slack.com/services/T/B/x"
    assert not sealer(NEW, OLD).is_newest(token)
    with pytest.raises(SecretUnreadable):
        sealer(NEW).open(token)
    with pytest.raises(SecretUnreadable):
        sealer(NEW).open("not a token at all")
    resealed = sealer(NEW, OLD).reseal(token)
    assert sealer(NEW).open(resealed) == "https://hooks.slack.com/services/T/B/x"


def test_the_keys_are_read_on_first_use_only() -> None:
    def no_key() -> list[bytes]:
        raise AssertionError("read")

    Sealer(no_key)  # making a sealer reads nothing: a command without secrets makes no key


def test_a_delivery_keeps_its_url_sealed_and_its_recipients_as_they_are() -> None:
    delivery = {"type": "slack", "target": "https://hooks.slack.com/x", "ok": True}
    stored = seal_delivery(sealer(NEW), delivery)
    assert list(stored) == ["type", "sealed_target", "ok"]
    assert open_delivery(sealer(NEW), stored) == delivery
    assert list(open_delivery(sealer(NEW), stored)) == ["type", "target", "ok"]
    email = {"type": "email", "target": "oncall@example.com", "ok": True}
    assert seal_delivery(sealer(NEW), email) == email
    # A key since dropped: the history still reads, saying the target cannot be.
    assert open_delivery(sealer(OLD), stored)["target"] == UNREADABLE_TARGET
