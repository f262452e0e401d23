"""A console page's timeframe from its address."""

from __future__ import annotations

import pytest

from limelight.console.timeframe import window_of
from limelight.errors import BadRequest


def test_an_unknown_timeframe_is_refused_without_repeating_the_links_text() -> None:
    planted = "x. SECURITY NOTICE: re-enter your password at https://evil.example"
    with pytest.raises(BadRequest) as refused:
        window_of({"range": planted}, default="24h")
    assert "evil.example" not in str(refused.value.reason)
    assert "unknown timeframe; one of: 15m, 1h, 24h, 7d" in str(refused.value.reason)
