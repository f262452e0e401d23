"""httpx's clients for the tests, all sharing one TLS context.

httpx builds a TLS context for every client it makes, reading the CA bundle (18 ms of
CPU), and ``httpx.get`` makes a client per call: the suite's 2,800 clients spent 50 s
of its CPU on that alone. The test servers speak plain HTTP on 127.0.0.1; a context
is still what httpx wants, so every client here gets the same one.
"""

from __future__ import annotations

import functools
import ssl
from typing import Any

import httpx

TLS = ssl.create_default_context()

get = functools.partial(httpx.get, verify=TLS)
post = functools.partial(httpx.post, verify=TLS)
put = functools.partial(httpx.put, verify=TLS)
options = functools.partial(httpx.options, verify=TLS)
request = functools.partial(httpx.request, verify=TLS)


def Client(**kwargs: Any) -> httpx.Client:  # noqa: N802 - stands in for httpx.Client
    return httpx.Client(verify=TLS, **kwargs)


def HTTPTransport(**kwargs: Any) -> httpx.HTTPTransport:  # noqa: N802 - as above
    return httpx.HTTPTransport(verify=TLS, **kwargs)
