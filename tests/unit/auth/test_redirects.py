from __future__ import annotations

import pytest

from limelight.auth.oauth.redirects import BadRedirect, check_registration, host_of, with_params

GOOD = [
    "https://app.example.com/oauth/callback",
    "https://app.example.com:8443/cb?tenant=1",
    "http://localhost:3000/cb",
    "http://127.0.0.1/cb",
    "http://[::1]:8080/cb",
]
BAD = [
    "",
    "http://app.example.com/cb",
    "https://app.example.com/cb#fragment",
    "https://app.example.com/cb#",
    "https://*.example.com/cb",
    "https://app.example.com/*",
    "https://user@app.example.com/cb",
    "https://user:pw@app.example.com/cb",
    "//app.example.com/cb",
    "/cb",
    "app.example.com/cb",
    "https:app.example.com/cb",
    "javascript:alert(1)",
    "data:text/html,hi",
    "ftp://app.example.com/cb",
    "https://app.example.com/a/../cb",
    "https://app.example.com/./cb",
    "https://app.example.com/c b",
    "https://app.exämple.com/cb",
    "https://app.example.com\\@evil.com/cb",
    "https://app.example.com:99999/cb",
    "https://app.example.com/" + "a" * 2048,
]


@pytest.mark.parametrize("url", GOOD)
def test_registrable(url: str) -> None:
    assert check_registration(url) == url


@pytest.mark.parametrize("url", BAD)
def test_refused(url: str) -> None:
    with pytest.raises(BadRedirect):
        check_registration(url)


def test_parameters_are_added_to_the_query_the_url_has() -> None:
    assert with_params("https://a.example/cb", {"code": "c", "state": "s&t"}) == (
        "https://a.example/cb?code=c&state=s%26t"
    )
    assert (
        with_params("https://a.example/cb?t=1", {"code": "c"}) == "https://a.example/cb?t=1&code=c"
    )


def test_the_consent_page_names_host_and_port() -> None:
    assert host_of("https://a.example:8443/cb") == "a.example:8443"
