"""Reading token and revocation requests, in either of the two shapes we accept.

- JSON with the contract's camelCase names (``grantType``, ``clientId``, ...),
  answered in camelCase. Strict: duplicate keys, unknown keys and non-string
  values are refused, since a lenient parser is where smuggled parameters hide.
- The standard form-encoded request (RFC 6749 4.1.3, 6.), optionally with HTTP
  Basic client authentication (2.3.1), answered with the standard names. Unknown
  parameters are ignored, as 3.2 requires.

Framework-free: the API layer passes the raw content type, body and headers.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl, unquote

from limelight.auth.oauth.errors import OAuthError, invalid_client, invalid_request
from limelight.validation import has_control

Style = Literal["json", "form"]
MAX_BODY = 16 * 1024

TOKEN_JSON = {
    "grantType": "grant_type",
    "clientId": "client_id",
    "clientSecret": "client_secret",
    "redirect": "redirect",
    "code": "code",
    "refreshToken": "refresh_token",
    "codeVerifier": "code_verifier",
}
TOKEN_FORM = {
    "grant_type": "grant_type",
    "client_id": "client_id",
    "client_secret": "client_secret",
    "redirect_uri": "redirect",
    "code": "code",
    "refresh_token": "refresh_token",
    "code_verifier": "code_verifier",
}
REVOKE_JSON = {
    "token": "token",
    "tokenTypeHint": "token_type_hint",
    "clientId": "client_id",
    "clientSecret": "client_secret",
}
REVOKE_FORM = {
    "token": "token",
    "token_type_hint": "token_type_hint",
    "client_id": "client_id",
    "client_secret": "client_secret",
}


@dataclass(frozen=True)
class ParsedRequest:
    style: Style
    params: dict[str, str]  # internal names; empty values dropped (RFC 6749 3.1)

    def get(self, name: str) -> str | None:
        return self.params.get(name)


@dataclass(frozen=True)
class ClientCredentials:
    client_id: str
    client_secret: str
    basic: bool  # sent in the Authorization header


# RFC 6749 Appendix A: ids, secrets, codes, tokens and URIs are printable characters.
# A control character in one is a malformed request, answered in OAuth's terms before
# any lookup (PostgreSQL refuses U+0000 in text, which answered outside them).
def _printable(key: str, value: str) -> str:
    if has_control(value):
        raise invalid_request(f"{key} holds a control character")
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise invalid_request(f"the parameter {key!r} is given more than once")
        seen[key] = value
    return seen


def _from_json(body: bytes, fields: Mapping[str, str]) -> dict[str, str]:
    try:
        # The standard library's parser, because orjson cannot report duplicate keys.
        data = json.loads(body, object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError) as exc:
        raise invalid_request("the body is not valid JSON") from exc
    if not isinstance(data, dict):
        raise invalid_request("the body must be a JSON object")
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise invalid_request(f"unknown parameters: {', '.join(unknown)}")
    params: dict[str, str] = {}
    for key, value in data.items():
        if value is None:
            continue
        if not isinstance(value, str):
            raise invalid_request(f"{key} must be a string")
        if value:
            params[fields[key]] = _printable(key, value)
    return params


def _from_form(body: bytes, fields: Mapping[str, str]) -> dict[str, str]:
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except (UnicodeDecodeError, ValueError) as exc:
        raise invalid_request("the form body is not valid") from exc
    data = _no_duplicates(pairs)
    return {fields[k]: _printable(k, v) for k, v in data.items() if k in fields and v}


def parse_body(
    content_type: str | None,
    body: bytes,
    query: str,
    json_fields: Mapping[str, str],
    form_fields: Mapping[str, str],
) -> ParsedRequest:
    if query:
        # Secrets in a URL end up in logs and browser history (RFC 6749 2.3.1, 3.2).
        raise invalid_request("parameters go in the request body, never in the URL")
    if len(body) > MAX_BODY:
        raise invalid_request("the request body is too large")
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media == "application/json":
        return ParsedRequest("json", _from_json(body, json_fields))
    if media == "application/x-www-form-urlencoded":
        return ParsedRequest("form", _from_form(body, form_fields))
    raise invalid_request("send application/json or application/x-www-form-urlencoded")


def _basic(authorization: str) -> tuple[str, str]:
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() != "basic" or not value:
        raise invalid_client("use HTTP Basic authentication with the Client ID and Secret", True)
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise invalid_client("the Basic credentials are not valid", True) from exc
    client_id, colon, secret = decoded.partition(":")
    # RFC 6749 2.3.1: both are form-urlencoded before being joined; a control character
    # is refused once decoded (%00 too).
    client_id, secret = unquote(client_id.replace("+", " ")), unquote(secret.replace("+", " "))
    if not colon or has_control(client_id + secret):
        raise invalid_client("the Basic credentials are not valid", True)
    return client_id, secret


def client_credentials(req: ParsedRequest, authorization: str | None) -> ClientCredentials:
    """The client's id and secret from exactly one place (RFC 6749 2.3: never two methods)."""
    body_id, body_secret = req.get("client_id"), req.get("client_secret")
    if authorization:
        if body_secret is not None:
            raise invalid_request("authenticate with HTTP Basic or in the body, not both")
        client_id, secret = _basic(authorization)
        if body_id is not None and body_id != client_id:
            raise invalid_request("the client ids in the body and the Basic header differ")
        return ClientCredentials(client_id, secret, basic=True)
    if body_id is None or body_secret is None:
        raise invalid_client("client authentication is required (clientId and clientSecret)", False)
    return ClientCredentials(body_id, body_secret, basic=False)


def token_body(style: Style, values: Mapping[str, str | int]) -> dict[str, str | int]:
    """A token response in the request's naming: camelCase for JSON, RFC names for forms."""
    if style == "form":
        return dict(values)
    camel = {
        "access_token": "accessToken",
        "refresh_token": "refreshToken",
        "expires_in": "expiresIn",
        "token_type": "tokenType",
    }
    return {camel[k]: v for k, v in values.items()}


def error_body(style: Style, error: OAuthError) -> dict[str, str]:
    body = {"error": error.error, "message": error.message}
    if style == "form":
        body["error_description"] = error.message  # what standard client libraries read
    return body
