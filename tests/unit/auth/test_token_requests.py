from __future__ import annotations

import base64

import pytest

from limelight.auth.oauth.errors import OAuthError
from limelight.auth.oauth.requests import (
    TOKEN_FORM,
    TOKEN_JSON,
    client_credentials,
    parse_body,
    token_body,
)

JSON = "application/json"
FORM = "application/x-www-form-urlencoded"


def parse(content_type: str, body: bytes, query: str = "") -> dict[str, str]:
    return parse_body(content_type, body, query, TOKEN_JSON, TOKEN_FORM).params


def test_json_camel_case_maps_to_the_standard_parameters() -> None:
    got = parse(JSON + "; charset=utf-8", b'{"grantType":"refresh_token","refreshToken":"r",'
                b'"redirect":"https://a/cb","code":""}')  # fmt: skip
    # An empty value counts as absent (RFC 6749 3.1).
    assert got == {"grant_type": "refresh_token", "refresh_token": "r", "redirect": "https://a/cb"}


def test_form_uses_the_rfc_names_and_ignores_unknown_ones() -> None:
    got = parse(FORM, b"grant_type=authorization_code&redirect_uri=https%3A%2F%2Fa%2Fcb&scope=x")
    assert got == {"grant_type": "authorization_code", "redirect": "https://a/cb"}


@pytest.mark.parametrize(
    ("content_type", "body", "query"),
    [
        (JSON, b'{"code":"a","code":"b"}', ""),
        (JSON, b'{"scope":"x"}', ""),
        (JSON, b'{"code":1}', ""),
        (JSON, b'{"code":{"a":1}}', ""),
        (JSON, b"[1]", ""),
        (JSON, b"{", ""),
        (JSON, b"\xff", ""),
        (FORM, b"code=a&code=b", ""),
        (FORM, b"code=a", "client_secret=s"),
        ("text/plain", b"code=a", ""),
        (JSON, b'{"code":"' + b"a" * 20000 + b'"}', ""),
    ],
)
def test_refused_as_invalid_request(content_type: str, body: bytes, query: str) -> None:
    with pytest.raises(OAuthError) as caught:
        parse(content_type, body, query)
    assert caught.value.error == "invalid_request"


def basic(raw: str) -> str:
    return "Basic " + base64.b64encode(raw.encode()).decode()


def test_basic_credentials_are_form_decoded() -> None:
    req = parse_body(FORM, b"grant_type=x", "", TOKEN_JSON, TOKEN_FORM)
    creds = client_credentials(req, basic("my%20client:s%3Acret"))
    assert (creds.client_id, creds.client_secret, creds.basic) == ("my client", "s:cret", True)


@pytest.mark.parametrize(
    ("body", "authorization", "error", "status"),
    [
        (b"client_id=a&client_secret=b", basic("a:b"), "invalid_request", 400),  # two methods
        (b"client_id=other", basic("a:b"), "invalid_request", 400),
        (b"", "Basic !!!", "invalid_client", 401),
        (b"", basic("no-colon"), "invalid_client", 401),
        # A control character, encoded or not, before any lookup (PostgreSQL: no U+0000).
        (b"", basic("abc%00:s"), "invalid_client", 401),
        (b"", basic("abc:s%0A"), "invalid_client", 401),
        (b"", basic("a\x00bc:s"), "invalid_client", 401),
        (b"", "Bearer ll_at_x", "invalid_client", 401),
        (b"client_id=a", None, "invalid_client", 401),
        (b"client_secret=b", None, "invalid_client", 401),
    ],
)
def test_client_authentication_problems(
    body: bytes, authorization: str | None, error: str, status: int
) -> None:
    req = parse_body(FORM, body, "", TOKEN_JSON, TOKEN_FORM)
    with pytest.raises(OAuthError) as caught:
        client_credentials(req, authorization)
    assert (caught.value.error, caught.value.status) == (error, status)
    if authorization and status == 401:
        assert caught.value.headers["WWW-Authenticate"].startswith("Basic")


def test_responses_use_the_requests_naming() -> None:
    values: dict[str, str | int] = {
        "access_token": "a",
        "expires_in": 86400,
        "token_type": "Bearer",
    }
    assert token_body("json", values) == {
        "accessToken": "a",
        "expiresIn": 86400,
        "tokenType": "Bearer",
    }
    assert token_body("form", values) == values
