"""The timeframe of a page: a preset relative to now, or a custom range in unix ms.

In the address as ``range=1h`` or ``from=..&to=..``, so a link keeps its
meaning: a preset link shows the latest data when opened, a custom one the
same data; the page's script shows times in the browser's zone.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from limelight.console.numbers import ascii_whole
from limelight.errors import BadRequest
from limelight.times import DAY_MS, HOUR_MS, MINUTE_MS, Timeframe

PRESETS: dict[str, tuple[int, str]] = {
    "15m": (15 * MINUTE_MS, "Last 15 minutes"),
    "1h": (HOUR_MS, "Last hour"),
    "24h": (DAY_MS, "Last 24 hours"),
    "7d": (7 * DAY_MS, "Last 7 days"),
}


@dataclass(frozen=True)
class Window:
    """A page's timeframe and how its address names it: the preset it is the latest of,
    or None for a custom range."""

    timeframe: Timeframe
    preset: str | None = None

    @property
    def from_ms(self) -> int:
        return self.timeframe.from_ms

    @property
    def to_ms(self) -> int:
        return self.timeframe.to_ms

    @property
    def label(self) -> str:
        return PRESETS[self.preset][1] if self.preset else "Custom"

    def params(self) -> list[tuple[str, str]]:
        """How the address says it."""
        if self.preset:
            return [("range", self.preset)]
        return [("from", str(self.from_ms)), ("to", str(self.to_ms))]

    def around(self, to_ms: int) -> Window:
        """The same preset ending at ``to_ms`` (a run started a moment later)."""
        if not self.preset:
            return self
        return Window(Timeframe(to_ms - PRESETS[self.preset][0], to_ms), self.preset)


def now_ms() -> int:
    return int(time.time() * 1000)


def _ms(params: Mapping[str, str], name: str) -> int:
    value = ascii_whole(params.get(name, ""), 16)
    if value is None:
        raise BadRequest(
            f"the timeframe's '{name}' must be a time in unix milliseconds",
            errors=[{"field": name, "message": "a time in unix milliseconds"}],
        )
    return value


def window_of(params: Mapping[str, str], default: str = "1h", now: int | None = None) -> Window:
    """The timeframe the address names; ``default`` when it names none."""
    end = now if now is not None else now_ms()
    if params.get("from") or params.get("to"):
        frm, to = _ms(params, "from"), _ms(params, "to")
        if frm >= to:
            raise BadRequest("the timeframe must start before it ends")
        return Window(Timeframe(frm, to))
    preset = params.get("range") or default
    if preset not in PRESETS:
        # The value itself is not repeated: a page must not show text from a link.
        raise BadRequest(f"unknown timeframe; one of: {', '.join(PRESETS)}")
    return Window(Timeframe(end - PRESETS[preset][0], end), preset)
