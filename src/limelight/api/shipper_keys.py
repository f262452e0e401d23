"""The ingest key as log shippers present it: the password of Basic auth, an Elasticsearch
``ApiKey``, a ``Bearer`` token or Splunk's ``Splunk <token>``.

Shippers have a field for a user and a password, or for an API key, not for our
``x-api-key`` header, so the key travels in whichever credential the shipper sends.
The key is then checked as every API key is (``deps.api_key``): any user name goes
with it, since the key alone says who sends.
"""

from __future__ import annotations

import base64
import binascii

from starlette.requests import Request

from limelight.api.deps import api_key
from limelight.auth.api_keys import MAX_KEY_LENGTH, KeyContext
from limelight.errors import Unauthorised

BASIC, BEARER, API_KEY, SPLUNK = "basic", "bearer", "apikey", "splunk"
KEY_PREFIX = "ll_"


def _basic(value: str) -> str | None:
    """The password of ``user:password`` in base64 (the user name when the password is
    empty: some shippers have a single field for a user)."""
    try:
        decoded = base64.b64decode(value, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, _, password = decoded.partition(":")
    return password or user or None


def _api_key(value: str) -> str | None:
    """An ``ApiKey`` credential: our key as it is, or ``base64(id:key)`` as Beats and
    Logstash write an Elasticsearch API key (the id is any text)."""
    if value.startswith(KEY_PREFIX):
        return value
    try:
        decoded = base64.b64decode(value, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    return decoded.rpartition(":")[2] or None


def key_from_authorization(header: str | None, schemes: frozenset[str]) -> str | None:
    """The key presented under one of ``schemes`` (case-insensitive), or None when the
    header is absent, of another scheme or unreadable."""
    if not header or len(header) > 4 * MAX_KEY_LENGTH:
        return None
    scheme, _, value = header.strip().partition(" ")
    scheme, value = scheme.lower(), value.strip()
    if scheme not in schemes or not value:
        return None
    if scheme == BASIC:
        return _basic(value)
    if scheme == API_KEY:
        return _api_key(value)
    return value


async def shipper_key(request: Request, schemes: frozenset[str]) -> KeyContext:
    """The request's key from ``Authorization`` (one of ``schemes``), else ``x-api-key``;
    401 when there is none or it is not a valid key."""
    value = key_from_authorization(request.headers.get("authorization"), schemes)
    if value is None:
        value = request.headers.get("x-api-key")
    if value is None:
        raise Unauthorised("missing authentication credentials")
    return await api_key(request, value)
