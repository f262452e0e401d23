"""The server's options follow the settings."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from pydantic import ValidationError

from limelight.http_server import (
    GC_YOUNG_THRESHOLD,
    GuardedHttpToolsProtocol,
    settle_heap,
    uvicorn_options,
)
from limelight.settings import Settings


@pytest.fixture(autouse=True)
def guards_as_they_were() -> Iterator[None]:
    """``uvicorn_options`` sets the serving process's guards on the protocol class (one
    server a process): put them back, so no later test in this process sees these."""
    saved = (GuardedHttpToolsProtocol.header_timeout, GuardedHttpToolsProtocol.max_connections)
    yield
    GuardedHttpToolsProtocol.header_timeout, GuardedHttpToolsProtocol.max_connections = saved


def test_forwarded_headers_are_believed_from_no_one_by_default() -> None:
    options = uvicorn_options(Settings())
    assert options["proxy_headers"] is False


def test_forwarded_headers_are_believed_from_the_named_proxies_only() -> None:
    options = uvicorn_options(Settings(trusted_proxies="10.0.0.5, 10.1.0.0/16"))
    assert options["proxy_headers"] is True
    assert options["forwarded_allow_ips"] == ["10.0.0.5", "10.1.0.0/16"]


@pytest.mark.parametrize("value", ["*", "proxy.internal", "10.0.0.300"])
def test_anything_but_addresses_and_networks_is_refused(value: str) -> None:
    with pytest.raises(ValidationError, match="not an IP address or network"):
        Settings(trusted_proxies=value)


def test_timeouts_and_limits_are_passed_on() -> None:
    settings = Settings(
        keep_alive_timeout=7, max_concurrency=300, max_connections=400, header_timeout=3
    )
    options = uvicorn_options(settings)
    assert options["timeout_keep_alive"] == 7
    assert options["limit_concurrency"] == 300
    assert GuardedHttpToolsProtocol.header_timeout == 3


def test_the_serving_process_freezes_its_start_up_heap_and_collects_less_often() -> None:
    threshold = gc.get_threshold()
    try:
        settle_heap()
        assert gc.get_freeze_count() > 0  # what start-up made is never scanned again
        assert gc.get_threshold() == (GC_YOUNG_THRESHOLD, *threshold[1:])
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
