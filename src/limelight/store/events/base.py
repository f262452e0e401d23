"""The storage seam for events: what every transport offers, and the row encoding."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from limelight.errors import StoreError
from limelight.event_json import data_texts
from limelight.scoped import ScopedStatement, require_scoped
from limelight.tenant import Tenant

# Columns written by INSERT, in the order of the encoded TSV fields. `data` is
# MATERIALIZED from `raw` (0001), but an insert sends the same text for it too: the
# input format parses it on the insert's parsing threads, where the column's own
# expression (raw::JSON) runs on one thread after the block is read. Measured on
# 2 cores (60,000 events of 0.46 kB, one session): 45k events/s in inserts of
# 12,000 against 27k, 32k against 23k in inserts of 1,000 (compact parts, 0012).
INSERT_COLUMNS = (
    "workspace_id",
    "environment_id",
    "dataset",
    "service",
    "namespace",
    "timestamp",
    "id",
    "raw",
    "data",
)

# How ClickHouse parses `raw` into the `data` JSON column on insert. Its defaults
# store a string that looks like a date ("2024-05-01", "2024-05-01T10:00:00Z") as
# a Date or DateTime, which string filters and groups then miss, and read
# booleans in a mixed array as numbers: a value keeps the kind it was sent with.
# An event may name one path twice ({"a.b": 1, "a": {"b": 2}}): the engine refused the
# whole INSERT; it now keeps the first value (nulls do not count), `raw` keeps both.
JSON_PARSE_SETTINGS: Mapping[str, int] = {
    "input_format_try_infer_dates": 0,
    "input_format_try_infer_datetimes": 0,
    "input_format_json_read_bools_as_numbers": 0,
    "type_json_skip_duplicated_paths": 1,
}
# The text of an INSERT (about twice its events' JSON: `raw` and `data`) is parsed on
# several threads in chunks of at least this size; with the engine's default of 10 MiB,
# the text of a 6MB body (the largest the Events API takes, about 12 MiB) was mostly
# parsed by one thread. On 2 cores (bench/ingest_table.py, README): inserts of 12,000
# events of 0.46 kB by one session 47.9k events/s in 1 MiB chunks against 38.4k, at the
# same CPU an event; one client sending 6MB bodies to the Events API one after another
# 20.5k against 18.3k. Four clients at once kept both cores busy before (24.5k against
# 24.8k). The rows and the parts are the same; the arrays of a path are typed per chunk
# (query/keys.py), every type is recorded. Measured on the embedded engine; a ClickHouse
# server queues small inserts (async_insert) and parses them when it flushes the queue.
PARSE_CHUNK_BYTES = 1 << 20

# The engine refuses an INSERT whose rows fall in more than 100 partitions (days, UTC).
MAX_DAYS_PER_INSERT = 100
# What every INSERT of events states: how `data` is parsed, that it is sent, in what
# chunks (above), and that the needle indexes (0003, 0011) are built when parts merge,
# not on insert. A merge computes every index of the part it writes, so the indexes
# cover all but the newest small parts, which a needle reads whole, with the same
# answers (0011). On 2 cores, one session, inserts of 12,000 events of 0.46 kB: 43.7k
# events/s against 27.7k building them; of 1,000: 26.0k against 19.7k.
INSERT_SETTINGS: Mapping[str, int] = {
    **JSON_PARSE_SETTINGS,
    "insert_allow_materialized_columns": 1,
    "materialize_skip_indexes_on_insert": 0,
    "min_chunk_bytes_for_parallel_parsing": PARSE_CHUNK_BYTES,
}

# The engine's codes for a text it could not parse: raised before any row is written.
REFUSED_TEXT = frozenset({6, 26, 27, 32, 33, 38, 41, 53, 69, 72, 117, 131})

_ERROR_CODE = re.compile(r"\bCode: (\d+)\.")


def engine_error(exc: BaseException) -> StoreError:
    """The store's error for an engine failure, with ClickHouse's numeric code: the
    exception's own (clickhouse-connect reads it from the answer), else the one its
    text names (``Code: N.``: chDB's errors carry the server's text)."""
    code = getattr(exc, "code", None)
    if not isinstance(code, int):
        found = _ERROR_CODE.search(str(exc))
        code = int(found.group(1)) if found else None
    return StoreError(str(exc), code)


def settings_clause(settings: Mapping[str, int]) -> str:
    """``k = v, ..`` for a SETTINGS clause (trusted names and integer values)."""
    return ", ".join(f"{name} = {int(value):d}" for name, value in settings.items())


# Not frozen: a frozen dataclass sets each field through object.__setattr__, 0.77 µs a
# row against 0.22 µs, for rows that nothing changes after they are built.
@dataclass(slots=True)
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
    """What the API, ingest and query layers need from an events backend: a tenant's
    events read only through statements that ``Scope`` made (``read``). Reads over every
    tenant's events, and statements that change them, are ``unscoped.UnscopedReader``'s."""

    def start(self) -> None:
        """Open the engine and apply the versioned DDL."""

    def close(self) -> None: ...

    def insert(self, tenant: Tenant, rows: Sequence[EventRow]) -> None:
        """Store the rows durably; return only when a read would see them."""

    def read(self, statement: ScopedStatement) -> QueryResult:
        """Run a statement that ``Scope`` made (anything else: ``TypeError``); rows as
        dicts. An answer with other columns than the statement's is refused
        (``StoreError``), see ``decode_result``."""

    def engine_version(self) -> str:
        """The engine's version, as it names it."""

    def disk_bytes(self) -> int:
        """Bytes of the store's files on disk, for /metrics."""

    @property
    def table(self) -> str:
        """The fully qualified events table name."""

    @property
    def paths_table(self) -> str:
        """The table of the types each JSON path is stored as (see ``paths``)."""

    @property
    def text_dictionaries(self) -> str | None:
        """The table whose text indexes' dictionaries a statement may read (a regex
        needle, ``query.needle``): the events table of one server or the embedded
        engine when the settings allow it (``regex_dictionaries``: every workspace's
        tokens are read); None on a cluster, where each shard holds its own."""


# The view that records the types of each path as events arrive (DDL 0014).
PATHS_VIEW = "event_paths_new_on_insert"


class TablesOf:
    """The events tables of a store's database, named once for both stores, and the reads
    both build on their transport's ``query``."""

    _database: str
    _cluster: str | None = None
    _regex_dictionaries: bool = False

    @property
    def table(self) -> str:
        return f"{self._database}.events"

    @property
    def data_table(self) -> str:
        """The table that holds the rows: on a cluster each shard's own, which mutations
        and partition changes address (``ON CLUSTER``), not the Distributed one."""
        return f"{self.table}_local" if self._cluster else self.table

    @property
    def on_cluster(self) -> str:
        return f" ON CLUSTER {self._cluster}" if self._cluster else ""

    @property
    def text_dictionaries(self) -> str | None:
        return self.table if self._regex_dictionaries and not self._cluster else None

    @property
    def paths_table(self) -> str:
        return f"{self._database}.event_paths"

    def query(
        self, sql: str, params: Mapping[str, Any], columns: Sequence[str] | None = None
    ) -> QueryResult:
        raise NotImplementedError  # each transport's own

    def read(self, statement: ScopedStatement) -> QueryResult:
        scoped = require_scoped(statement)
        return self.query(scoped.sql, scoped.params, scoped.columns)

    def engine_version(self) -> str:
        return str(self.query("SELECT version() AS version", {}, ["version"]).rows[0]["version"])


def _tsv_field(value: str) -> bytes:
    # TabSeparated escaping for short header-derived values.
    return (
        value.replace("\\", "\\\\")
        .replace("\t", "\\t")
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .encode()
    )


def encode_rows(tenant: Tenant, rows: Sequence[EventRow]) -> bytes:
    """Encode rows as TabSeparated (``INSERT_COLUMNS``), the cheapest format for both
    transports.

    The raw JSON text holds no literal tabs or newlines (JSON escapes them in
    strings), so only its backslashes need doubling. It goes twice: as `raw` and
    as `data`, parsed by the engine (``event_json.data_texts``). A batch has few
    datasets, services and namespaces: each is escaped once, not once a row. With the
    batch's whole-float search, 2.7 µs an event of 0.5 kB against 4.9 (a 6MB body, the
    two versions in turns, medians of 15 rounds each, three times).
    """
    tenant_fields = _tsv_field(tenant.workspace_id) + b"\t" + _tsv_field(tenant.environment_id)
    heads: dict[tuple[str, str, str], bytes] = {}
    datas = data_texts([r.raw for r in rows])
    # The time as seconds with three decimals: the engine reads a bare number of 12 digits
    # or fewer (milliseconds before 2001-09-09) as a date, and refused the whole INSERT.
    lines = []
    for r, data in zip(rows, datas, strict=True):
        names = (r.dataset, r.service, r.namespace)
        head = heads.get(names)
        if head is None:
            head = heads[names] = b"\t".join([tenant_fields, *map(_tsv_field, names)])
        text = r.raw.replace(b"\\", b"\\\\")
        data = text if data is r.raw else data.replace(b"\\", b"\\\\")
        lines.append(
            b"%s\t%d.%03d\t%s\t%s\t%s"
            % (
                head,
                r.timestamp_ms // 1000,
                r.timestamp_ms % 1000,
                _tsv_field(r.id),
                text,
                data,
            )
        )
    return b"\n".join(lines)


# Statements are answered in ClickHouse's JSON format: one document holding the
# column names ("meta"), the rows ("data"), their number and the statistics.
# Parsing it is as fast as JSONEachRow (12-16 ms for 20,000 rows either way), and
# it lets a reader prove the answer is whole and belongs to its statement.
RESULT_FORMAT = "JSON"


def decode_result(payload: bytes, columns: Sequence[str] | None = None) -> QueryResult:
    """The rows of one statement's answer, or ``StoreError`` when it is not that answer.

    Defence in depth against an engine handing over output that is not this
    statement's (chDB keeps the partial output of a failed statement and
    prepends it to the next answer on the same session): the answer must parse
    as exactly one JSON document (a leftover before it makes the text invalid,
    whatever its shape), hold as many rows as it says, and, when ``columns`` is
    given, select exactly those columns in that order.
    """
    try:
        doc = orjson.loads(payload)
    except orjson.JSONDecodeError:
        raise StoreError("the events store's answer is not one JSON document") from None
    data = doc.get("data") if isinstance(doc, dict) else None
    meta = doc.get("meta") if isinstance(doc, dict) else None
    if not isinstance(data, list) or not isinstance(meta, list) or doc.get("rows") != len(data):
        raise StoreError("the events store's answer is not a whole result")
    if columns is not None and [m.get("name") for m in meta] != list(columns):
        raise StoreError("the events store answered with columns the statement does not select")
    stats = doc.get("statistics") or {}
    return QueryResult(
        rows=data,
        elapsed=float(stats.get("elapsed", 0.0)),
        rows_read=int(stats.get("rows_read", 0)),
        bytes_read=int(stats.get("bytes_read", 0)),
    )
