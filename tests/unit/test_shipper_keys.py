"""The ingest key in the credentials shippers send."""

from __future__ import annotations

import base64

import pytest

from limelight.api.shipper_keys import (
    API_KEY,
    BASIC,
    BEARER,
    SPLUNK,
    key_from_authorization,
)

KEY = "ll_pk_" + "a" * 43
ALL = frozenset((BASIC, BEARER, API_KEY, SPLUNK))


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    ("header", "key"),
    [
        (f"Basic {b64('elastic:' + KEY)}", KEY),
        (f"basic {b64(KEY + ':')}", KEY),  # a key given as the user name
        (f"ApiKey {KEY}", KEY),
        (f"ApiKey {b64('id-1:' + KEY)}", KEY),
        (f"Bearer {KEY}", KEY),
        (f"Splunk {KEY}", KEY),
        (f"  Splunk   {KEY} ", KEY),
        (None, None),
        ("", None),
        ("Basic", None),
        ("Basic %%%", None),
        ("Basic " + base64.b64encode(b"u:\xff").decode(), None),
        (f"Digest {KEY}", None),
        (KEY, None),
        ("Bearer " + "x" * 1000, None),
    ],
)
def test_the_key_is_read_from_each_scheme(header: str | None, key: str | None) -> None:
    assert key_from_authorization(header, ALL) == key


def test_a_scheme_the_format_does_not_take_gives_nothing() -> None:
    assert key_from_authorization(f"Splunk {KEY}", frozenset((BASIC, BEARER))) is None
