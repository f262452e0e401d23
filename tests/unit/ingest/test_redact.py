"""Redacting values of keys that obviously hold secrets, and only those."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from limelight.ingest.redact import REDACTED, is_secret_key, may_hold_secrets, redact

SECRET_KEYS = [
    "password", "Password", "PASSWORD", "passwd", "pwd", "secret", "client_secret",
    "authorization", "Authorization", "x-api-key", "X-Api-Key", "api_key", "apiKey",
    "api.key", "access_token", "accessToken", "refresh_token", "token", "Token",
    "cookie", "Set-Cookie", "session_id", "sessionId", "private_key", "credentials",
    "db.password", "userPassword", "csrf_token", "stripe-secret",
]  # fmt: skip

LOOKALIKES = [
    "token_count", "tokens", "max_tokens", "passage", "compass", "author", "authority",
    "keyboard", "key", "monkey", "secretary_name", "sessions", "cookies_enabled",
    "password_reset_requested", "tokenizer", "message", "passenger",
]  # fmt: skip


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_secret_keys_are_recognised_in_any_case(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize("key", LOOKALIKES)
def test_lookalikes_are_not_secrets(key: str) -> None:
    assert not is_secret_key(key)


def test_redaction_at_any_depth_in_objects_and_arrays() -> None:
    event: dict[str, Any] = {
        "message": "login",
        "password": "hunter2",
        "token_count": 12,
        "request": {
            "headers": {"Authorization": "Bearer abc", "Accept": "json"},
            "body": [{"user": "ann", "PassWord": "p1"}, [{"deep": {"api_key": "k"}}]],
        },
        "tokens": ["t1", "t2"],
    }
    assert redact(event) is True
    assert event == {
        "message": "login",
        "password": REDACTED,
        "token_count": 12,
        "request": {
            "headers": {"Authorization": REDACTED, "Accept": "json"},
            "body": [{"user": "ann", "PassWord": REDACTED}, [{"deep": {"api_key": REDACTED}}]],
        },
        "tokens": ["t1", "t2"],
    }


def test_a_secret_key_holding_an_object_is_redacted_whole() -> None:
    event: dict[str, Any] = {"credentials": {"user": "a", "pin": 1234}}
    assert redact(event)
    assert event == {"credentials": REDACTED}


def test_nothing_to_redact_leaves_the_event_as_it_was() -> None:
    event = {"message": "hi", "token_count": 3, "nested": {"author": "x"}, "n": None}
    before = copy.deepcopy(event)
    assert redact(event) is False
    assert event == before


def test_null_secret_values_stay_null() -> None:
    event: dict[str, Any] = {"password": None}
    assert redact(event) is False
    assert event == {"password": None}


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_the_body_test_never_misses_a_body_holding_a_secret_key(key: str) -> None:
    body = json.dumps([{"a": 1}, {"deep": [{key: "v"}]}]).encode()
    assert may_hold_secrets(body)


def test_the_body_test_sees_keys_spelled_with_escapes() -> None:
    body = b'[{"p\\u0061ssword": "hunter2"}]'
    assert json.loads(body)[0] == {"password": "hunter2"}
    assert may_hold_secrets(body)


def test_a_body_without_any_hint_is_not_walked() -> None:
    body = json.dumps([{"message": "GET /orders", "duration": 12, "user": {"id": 3}}]).encode()
    assert not may_hold_secrets(body)


def test_redaction_reaches_deeper_than_the_recursion_limit() -> None:
    event: dict[str, Any] = {"token": "top"}
    node = event
    for _ in range(5000):
        node["a"] = {}
        node = node["a"]
    node["api_key"] = "deep"
    assert redact(event)
    assert event["token"] == REDACTED and node["api_key"] == REDACTED


# A secret key written as a key inside another, as OTLP's dotted attributes arrive
# (split at their dots) and as JSON clients nest them.
NESTED_SECRETS: list[dict[str, Any]] = [
    {"api": {"key": "S"}},
    {"x": {"api": {"key": "S"}}},
    {"X-Api": {"Key": "S"}},
    {"private": {"key": "S"}},
    {"session": {"id": "S"}},
    {"api": [{"key": "S"}]},
]


@pytest.mark.parametrize("event", NESTED_SECRETS)
def test_a_secret_key_split_at_its_dots_is_redacted(event: dict[str, Any]) -> None:
    assert may_hold_secrets(json.dumps([event]).encode())
    assert redact(event)
    assert "S" not in json.dumps(event)
    assert REDACTED in json.dumps(event)


def test_a_key_nested_under_another_is_not_a_secret_by_the_pair_alone() -> None:
    event: dict[str, Any] = {
        "api": {"version": 2, "keys": 3},
        "session": {"count": 1},
        "key": "k",
        "private": {"name": "p"},
    }
    before = copy.deepcopy(event)
    assert redact(event) is False
    assert event == before
