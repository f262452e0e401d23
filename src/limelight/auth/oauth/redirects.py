"""Redirect URLs: what may be registered, and how we send a browser back.

At authorization time the redirect is compared with the registered one as a
plain string (RFC 9700 2.1: exact match). No normalisation, no prefix or host
matching: every look-alike (``good.com.evil.com``, ``good.com@evil.com``, a
trailing slash, another case, an extra query) is simply a different string.
"""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit, urlunsplit

from limelight.errors import InvalidValue

MAX_LENGTH = 2048
LOOPBACK = {"localhost", "127.0.0.1", "::1"}


class BadRedirect(InvalidValue):
    """A redirect URL that may not be registered; the message says why."""


def check_registration(url: str) -> str:
    """The URL unchanged if it may be registered, else ``BadRedirect`` saying why."""
    if not url or len(url) > MAX_LENGTH:
        raise BadRedirect(f"a redirect URL has 1 to {MAX_LENGTH} characters")
    if not url.isascii() or any(c.isspace() or ord(c) < 0x20 or c == "\x7f" for c in url):
        raise BadRedirect("a redirect URL is ASCII without spaces (use punycode for IDNs)")
    if "#" in url:
        raise BadRedirect("a redirect URL has no fragment (RFC 6749 3.1.2)")
    if "*" in url:
        raise BadRedirect("a redirect URL has no wildcard")
    if "\\" in url:
        raise BadRedirect("a redirect URL has no backslash")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise BadRedirect(f"not a URL: {exc}") from exc
    if parts.scheme not in ("https", "http") or not parts.netloc.strip() or not host:
        raise BadRedirect("a redirect URL is absolute: https://host/path")
    if "@" in parts.netloc:
        raise BadRedirect("a redirect URL has no user name or password")
    if parts.scheme == "http" and host not in LOOPBACK:
        raise BadRedirect("a redirect URL uses https (http only for localhost or 127.0.0.1)")
    segments = parts.path.split("/")
    if "." in segments or ".." in segments:
        raise BadRedirect("a redirect URL has no . or .. path segments")
    return url


def with_params(url: str, params: dict[str, str]) -> str:
    """``url`` with ``params`` added to its query (keeping the query it has)."""
    parts = urlsplit(url)
    added = urlencode(params)
    query = f"{parts.query}&{added}" if parts.query else added
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def host_of(url: str) -> str:
    """What the consent page names as the destination: the host and any port."""
    return urlsplit(url).netloc
