"""What a key or a value of the Events page leads to: a filter on the value (``=`` or
``!=``), a group-by in the query builder, a column; and the level-like key that colours
the page's rows. Pure: addresses from the page's own (its dataset, timeframe, search
and filters), shared by the field sidebar and an event's detail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from limelight.console.event_lines import clip
from limelight.console.query_form import format_value
from limelight.console.render import query_string
from limelight.event_json import SYSTEM_FIELDS

# Keys that say how severe an event is, in the order they are looked for: the first the
# dataset holds is its level. ``level`` is what OpenTelemetry logs are stored with (a
# lower-case name, see ingest/otlp/logs.py) and what JSON loggers write (structlog, zap,
# logrus, python-json-logger); ``log.level`` is Elastic Common Schema's; ``severity``
# Google Cloud Logging's; ``severityText`` OpenTelemetry's own field name;
# ``status.code`` a span's status (OK, ERROR, UNSET). Rows stand out by the level's text
# (``event_lines.tone_of``): numeric levels (pino's 50) are shown but not coloured.
LEVEL_KEYS = ("level", "log.level", "severity", "severityText", "status.code")
# The most levels drawn as their own bars; the rest are summed as one.
MAX_LEVEL_SERIES = 8
MAX_VALUE_TEXT = 120


def level_key_of(keys: Sequence[Mapping[str, Any]]) -> str | None:
    """The first of ``LEVEL_KEYS`` among a dataset's keys (``[{key, types}]``)."""
    held = {k["key"] for k in keys}
    return next((k for k in LEVEL_KEYS if k in held), None)


def filterable(value: Any) -> bool:
    """A value a filter can name exactly: text, a number or a boolean."""
    return isinstance(value, str | int | float | bool)


@dataclass(frozen=True)
class FieldActions:
    """The addresses a key or a value leads to from a page of events: ``base`` is the
    environment's, ``dataset`` the page's, ``window`` its timeframe's parameters,
    ``pairs`` its search and filters (``q``, ``fk``, ...) and ``columns`` its columns."""

    base: str
    dataset: str
    window: list[tuple[str, str]]
    pairs: list[tuple[str, str]]
    columns: list[str]
    extra: list[tuple[str, str]]  # what else the Events page keeps (the open key)

    def events(self, pairs: Sequence[tuple[str, str]], columns: Sequence[str]) -> str:
        address = [("ds", self.dataset), *self.window, *pairs]
        if columns:
            address.append(("cols", ",".join(columns)))
        return f"{self.base}/events{query_string(address + self.extra)}"

    def back(self) -> str:
        """The Events page itself."""
        return self.events(self.pairs, self.columns)

    def where(self, key: str, value: Any, negate: bool = False) -> str:
        """The Events page with ``key = value`` (or ``!=``) added to its filters."""
        operation = "!=" if negate else "="
        added = [("fk", key), ("fo", operation), ("fv", format_value(value))]
        return self.events([*self.pairs, *added], self.columns)

    def column(self, key: str) -> str | None:
        """The Events page with ``key`` as a column; None when it is one already."""
        if key in self.columns:
            return None
        return self.events(self.pairs, [*self.columns, key])

    def group_by(self, key: str) -> str:
        """The query builder: the count of the page's events grouped by ``key``."""
        address = [("nt", "dataset"), ("nv", self.dataset), ("co", "COUNT"), ("g", key)]
        return f"{self.base}/query{query_string([*address, *self.pairs, *self.window])}"

    def value_row(self, key: str, value: Any, width: int = MAX_VALUE_TEXT) -> dict[str, Any]:
        """A value as the sidebar and the detail list it (its text cut at ``width``),
        with the filters on it."""
        # As a filter's value is written: "500" (text) and 500 (a number) apart.
        text = "null" if value is None else format_value(value)
        row: dict[str, Any] = {"text": clip(text, width), "include": None}
        row["exclude"] = None
        if filterable(value):
            row["include"] = self.where(key, value)
            row["exclude"] = self.where(key, value, negate=True)
        return row


def flatten(event: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """An event's keys as dotted paths (system fields first, then by path) and their
    values; arrays and empty objects stay whole."""
    paths: list[tuple[str, Any]] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict) and value:
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        else:
            paths.append((prefix, value))

    walk("", {k: v for k, v in event.items() if k not in SYSTEM_FIELDS})
    system = [(k, event[k]) for k in SYSTEM_FIELDS if k in event]
    return system + sorted(paths, key=lambda kv: kv[0])
