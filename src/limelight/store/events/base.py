"""The storage seam for events: what every transport offers, and the row encoding."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

# Columns written by INSERT, in the order of the encoded TSV fields.
INSERT_COLUMNS = (
    "workspace_id",
    "environment_id",
    "dataset",
    "service",
    "namespace",
    "timestamp",
    "id",
    "raw",
)


@dataclass(frozen=True, slots=True)
class Tenant:
    """Who owns the data. Every read and write of events carries one."""

    workspace_id: str
    environment_id: str


@dataclass(frozen=True, slots=True)
class EventRow:
    """One enriched event, ready to store: system fields plus the event's JSON text."""

    dataset: str
    service: str
    namespace: str
    timestamp_ms: int
    id: str
    raw: bytes  # the event as JSON, exactly what reads give back


@dataclass(slots=True)
class QueryResult:
    rows: list[dict[str, Any]]
    elapsed: float = 0.0
    rows_read: int = 0
    bytes_read: int = 0
    meta: dict[str, Any] = field(default_factory=dict)


class EventStore(Protocol):
    """What the API, ingest and query layers need from an events backend."""

    def start(self) -> None:
        """Open the engine and apply the versioned DDL."""

    def close(self) -> None: ...

    def insert(self, tenant: Tenant, rows: Sequence[EventRow]) -> None:
        """Store the rows durably; return only when a read would see them."""

    def query(self, sql: str, params: Mapping[str, Any]) -> QueryResult:
        """Run a SELECT with bound parameters; rows as dicts (JSONEachRow)."""

    @property
    def table(self) -> str:
        """The fully qualified events table name."""


def _tsv_field(value: str) -> bytes:
    # TabSeparated escaping for short header-derived values.
    return (
        value.replace("\\", "\\\\")
        .replace("\t", "\\t")
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .encode()
    )


def encode_rows(tenant: Tenant, rows: Iterable[EventRow]) -> bytes:
    """Encode rows as TabSeparated, the cheapest format for both transports.

    The raw JSON text holds no literal tabs or newlines (JSON escapes them in
    strings), so only its backslashes need doubling.
    """
    prefix = _tsv_field(tenant.workspace_id) + b"\t" + _tsv_field(tenant.environment_id) + b"\t"
    lines = [
        b"%s%s\t%s\t%s\t%d\t%s\t%s"
        % (
            prefix,
            _tsv_field(r.dataset),
            _tsv_field(r.service),
            _tsv_field(r.namespace),
            r.timestamp_ms,
            _tsv_field(r.id),
            r.raw.replace(b"\\", b"\\\\"),
        )
        for r in rows
    ]
    return b"\n".join(lines)


# orjson keeps integers from -2**63 to 2**64-1 exact and reads larger ones as
# floats, silently. Only a text holding such an integer takes the slower
# standard-library path, which keeps them exact. Finding them must cost little
# on every batch: runs of 19+ digits are found at C speed in a copy where every
# digit is '0' (hex ids make a few per batch), and only those few are looked at.
_DIGITS_AS_ZERO = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
_LONG_RUN = b"0" * 19
_RUN_END = re.compile(rb"[^0]|$")
_SPACE = b" \t\r\n"
_INT64_MIN_MAGNITUDE = 2**63
_UINT64_MAX = 2**64 - 1


def _number_beyond_64_bits(text: bytes, start: int, end: int) -> bool:
    """Is the digit run text[start:end] an integer token out of orjson's range?"""
    if end < len(text) and text[end] in b".eE":
        return False  # a float, which orjson reads as a float anyway
    i = start - 1
    negative = i >= 0 and text[i] == 45  # '-'
    if negative:
        i -= 1
    while i >= 0 and text[i] in _SPACE:
        i -= 1
    if i < 0 or text[i] not in b"[:,":
        return False  # inside a string (or not a value): stored as sent
    value = int(text[start:end])
    return value > (_INT64_MIN_MAGNITUDE if negative else _UINT64_MAX)


def has_big_integer(text: bytes) -> bool:
    """Whether the JSON text may hold an integer that orjson would turn into a float.

    A digit run inside a string that happens to follow ``:`` or ``,`` counts
    too: that costs only the slower path, never exactness.
    """
    zeros = text.translate(_DIGITS_AS_ZERO)
    start = zeros.find(_LONG_RUN)
    while start != -1:
        found = _RUN_END.search(zeros, start + 19)
        end = found.start() if found else len(zeros)
        if _number_beyond_64_bits(text, start, end):
            return True
        start = zeros.find(_LONG_RUN, end)
    return False


def load_event_json(raw: bytes | str) -> Any:
    """Parse an event's stored JSON text, big integers exact."""
    text = raw.encode() if isinstance(raw, str) else raw
    if has_big_integer(text):
        return json.loads(text)
    return orjson.loads(text)


def decode_json_rows(payload: bytes) -> list[dict[str, Any]]:
    """Parse JSONEachRow output."""
    return [orjson.loads(line) for line in payload.splitlines() if line]
