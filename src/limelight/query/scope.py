"""The one place a statement against a tenant's events gets its tenant filter and limits.

Every statement the compiler writes over the events (and over the paths their
keys hold) is a ``CompiledQuery``, the one ``ScopedStatement`` there is, which
only ``Scope.statement`` makes: from a ``Select`` that only ``Scope.select`` (a
table read under a ``Condition`` that only ``Scope.where`` makes: the tenant
filter first in the WHERE, always) or ``Scope.around`` (a SELECT over such
SELECTs) makes, and it closes the statement with the run's limits as SETTINGS.
No statement can forget either, and the events store reads no other kind
(``limelight.scoped``). What a statement adds as text (its columns, the rest of
its WHERE) may narrow the tenant filter, never widen it (an OR outside
parentheses is refused), and the whole text is checked once more when
``Scope.statement`` closes it: every table it reads, wherever written, is read
under this scope's tenant filter, so a subquery is a ``Select`` or is refused. The one
other read a statement may hold is of a text index's dictionary (``Scope.dictionary``):
every tenant's tokens over a timeframe's days, which a regex needle matches to learn
which tokens to look up in the tenant's rows.

The three types take a seal that this module alone holds: built elsewhere, each
is a type error for mypy and a ``TypeError`` when it runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, final

from limelight.errors import BadRequest, LimelightError
from limelight.query.sql import Params
from limelight.scoped import ScopedStatement
from limelight.times import DAY_MS, Timeframe

# The columns that make a stored event whole again (see ``event_json``).
EVENT_COLUMNS = (
    "raw, toUnixTimestamp64Milli(timestamp) AS _timestamp, dataset AS _dataset, "
    "service AS _service, namespace AS _namespace, id AS _id"
)
EVENT_COLUMN_NAMES = ("raw", "_timestamp", "_dataset", "_service", "_namespace", "_id")


@dataclass(frozen=True)
class RunOptions:
    """A run's page and limits: what its statements may cost of the engine."""

    limit: int = 100
    offset: int = 0
    granularity_ms: int | None = None
    max_execution_s: float = 10.0
    max_result_bytes: int = 6 * 1024 * 1024
    max_memory_bytes: int = 2048 * 1024 * 1024


@final
class _Seal:
    """What the constructors below require: only this module has one."""

    __slots__ = ()


_SEAL = _Seal()


def _unsealed(seal: object, made: str) -> None:
    if seal is not _SEAL:
        raise TypeError(f"a {made} is made by Scope only")


@final
class Condition:
    """A WHERE clause that begins with the tenant filter (made by ``Scope.where`` only)."""

    __slots__ = ("sql",)

    def __init__(self, seal: _Seal, sql: str) -> None:
        _unsealed(seal, "Condition")
        self.sql = sql


@final
class Select:
    """A SELECT that reads a tenant's rows only (made by ``Scope.select`` and
    ``Scope.around``); its text, as ``str()`` gives it, may be a subquery of another."""

    __slots__ = ("sql",)

    def __init__(self, seal: _Seal, sql: str) -> None:
        _unsealed(seal, "Select")
        self.sql = sql

    def __str__(self) -> str:
        return self.sql


@final
class CompiledQuery(ScopedStatement):
    """A whole statement over a tenant's events, its limits included (made by
    ``Scope.statement`` only): what ``EventStore.read`` runs."""

    __slots__ = ("_columns", "_params", "_sql")

    def __init__(
        self, seal: _Seal, sql: str, params: dict[str, Any], columns: tuple[str, ...]
    ) -> None:
        _unsealed(seal, "CompiledQuery")
        self._sql, self._params, self._columns = sql, params, columns

    @property
    def sql(self) -> str:
        return self._sql

    @property
    def params(self) -> dict[str, Any]:
        return self._params

    @property
    def columns(self) -> tuple[str, ...]:
        return self._columns

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CompiledQuery):
            return NotImplemented
        return (self._sql, self._params, self._columns) == (
            other._sql,
            other._params,
            other._columns,
        )

    def __hash__(self) -> int:
        return hash((self._sql, self._columns))  # not its params: a dict

    def __repr__(self) -> str:
        return f"CompiledQuery({self._sql!r}, {self._params!r}, {self._columns!r})"


# What could widen the tenant filter: in `tenant AND x OR y` the OR binds last and reads
# every tenant's rows where y holds. The compiler puts every OR of its conditions in
# parentheses; ``_widening`` refuses one that is not, before the WHERE ends and outside
# quoted names (JSON paths are backquoted; values are bound, never in the text).
# ``or(a, b)`` is the function, not the keyword. The expressions read the text in
# capitals: SQL's keywords are case-blind, and a case-blind expression is slower.
_OR = re.compile(r"\bOR\b")
# Where ``or(`` is the function: an operand's start (after an opening parenthesis, a
# comma, an operator keyword, or at the start). Anywhere else, ClickHouse reads the
# keyword, even written against what follows (``x = 1 OR`y` = 2``, ``OR(y = 2)``).
_OPERAND_START = re.compile(
    r"(?:^|[(,]|\b(?:AND|OR|NOT|WHERE|PREWHERE|HAVING|ON|WHEN|THEN|ELSE))\s*$"
)
_OR_WORD = re.compile(r"\bOR\b")  # over the text in capitals
_QUOTED = re.compile(r"`(?:[^`\\]|\\.)*`|'(?:[^'\\]|\\.)*'")
_WHERE_ENDS = re.compile(r"\b(?:GROUP\s+BY|ORDER\s+BY|LIMIT|HAVING|SETTINGS)\b")


def _widening(sql: str) -> str | None:
    """``sql`` when, continuing a WHERE, it holds an OR outside parentheses (or past one
    it closed without opening) before the WHERE ends; else None."""
    # Most conditions and tails hold no OR, and a substring test and one search clear
    # them (" ORDER BY" included); the rest count the parentheses before each OR. Case-
    # blind expressions over every one made the compiler's CPU time 1.25 times its own,
    # this 1.16 (bench/scope_guard.py, the golden cases: 15 µs a compile, where a run's
    # statements take milliseconds in the engine).
    upper = sql.upper()
    if "OR" not in upper or _OR_WORD.search(upper) is None:
        return None
    text = _QUOTED.sub("``", upper) if "`" in sql or "'" in sql else upper

    def depth(at: int) -> int:
        return text.count("(", 0, at) - text.count(")", 0, at)

    ends = (found.start() for found in _WHERE_ENDS.finditer(text))
    end = next((at for at in ends if depth(at) == 0), len(text))
    for found in _OR.finditer(text, 0, end):
        at = found.start()
        called = text.startswith("(", found.end()) and _OPERAND_START.search(text, 0, at)
        if depth(at) <= 0 and not called:
            return sql
    return None


# Every table a statement reads, as ``Scope.select`` writes it: ``FROM table WHERE`` and
# this tenant's filter, bound to this scope's ids. A subquery written as text in a
# column or a tail (``(SELECT .. FROM db.events)``, ``.. UNION ALL SELECT ..``) reads a
# table without it, and is refused: a ``Select`` is the only way to read one. ``ARRAY
# JOIN`` joins an expression, not a table.
_TABLE_READ = re.compile(r"\b(?:FROM|(?<!ARRAY )JOIN)\s+(?!\()", re.IGNORECASE)
_TENANT_READ = re.compile(
    r"[\w.`]+(?: PREWHERE raw\.size > \{p\d+:UInt32\})?"
    r" WHERE workspace_id = \{(?P<ws>p\d+):String\}"
    r" AND environment_id = \{(?P<env>p\d+):String\}"
)


def _refuse_unscoped_reads(sql: str, params: Params, scope: Scope) -> None:
    # :IMPORTANT: the check of the whole text, whatever the parts it was built from. The
    # one other read allowed is of an index's dictionary as ``Scope.dictionary`` wrote it
    # for this statement, word for word.
    values = params.values
    for allowed in params.dictionary_reads:
        sql = sql.replace(allowed, "(dictionary)")
    text = _QUOTED.sub("``", sql) if "`" in sql or "'" in sql else sql
    for found in _TABLE_READ.finditer(text):
        read = _TENANT_READ.match(text, found.end())
        if (
            read is None
            or values.get(read["ws"]) != scope.workspace_id
            or values.get(read["env"]) != scope.environment_id
        ):
            at = found.start()
            raise LimelightError(f"a table read outside the tenant filter: {text[at : at + 200]!r}")


def _refuse_widening(sql: str) -> None:
    # :IMPORTANT: a condition after the tenant filter may narrow it, never widen it.
    if _widening(sql) is not None:
        raise LimelightError(f"a condition would widen the tenant filter: {sql[:200]!r}")


# What a statement that reads the newest events in key order and stops at its LIMIT asks
# of the engine: to read one part range after another, not ahead in parallel (its
# default), which reads what the LIMIT never takes. Over 10M spans: the newest 1M values
# of a key 162 ms against 270 (of a key of SERVER spans alone, 2M events read, 356
# against 663); the newest 100 events with a needle in 1 of 50, 49 against 132 ms (over
# 1M, 60 against 118); without one 15 to 26 ms either way.
READ_NEWEST = (("read_in_order_use_buffering", 0),)
# A setting a statement asks for is a name the code writes; checked all the same, as it is
# written into the SQL.
_SETTING_NAME = re.compile(r"[a-z_]+")


def engine_settings(asked: Sequence[tuple[str, int]]) -> str:
    """What ``Scope.statement`` appends to the run's limits for ``asked``."""
    for name, _ in asked:
        if not _SETTING_NAME.fullmatch(name):
            raise LimelightError(f"not a setting's name: {name!r}")
    return "".join(f", {name} = {value:d}" for name, value in asked)


# The engine parses at most this many bytes of a statement (ClickHouse's max_query_size,
# the same default on chDB and on a server): past it a run failed with a syntax error.
# Values are bound apart from the text, so what grows a statement is its filters, the
# values of an IN (a placeholder each), calculations, group-bys and the keys' names.
MAX_STATEMENT_BYTES = 262_144


class StatementTooLarge(BadRequest):
    """A statement longer than the engine parses (a 400: the query asks too much)."""


def _refuse_too_large(sql: str) -> None:
    size = len(sql.encode())
    if size > MAX_STATEMENT_BYTES:
        raise StatementTooLarge(
            f"the query is too large to run: it makes a statement of {size:,} bytes, and "
            f"the engine reads at most {MAX_STATEMENT_BYTES:,}; use fewer filters, fewer "
            "values in them, fewer calculations or group-bys, or shorter keys"
        )


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The days the events' partitions can name (their key is toDate(timestamp), a Date).
_DATE_DAYS = (0, 65_535)
_EPOCH = date(1970, 1, 1)


def partition_days(timeframe: Timeframe) -> tuple[str, str]:
    """The partition id (``YYYYMMDD``, how a part's name begins) of the timeframe's first
    day, and that of the day after its last: the parts of those days are the names
    between the two (the part names ``20261127_25_25_1`` sort by their day)."""
    first = timeframe.from_ms // DAY_MS
    last = (timeframe.to_ms - 1) // DAY_MS

    def day(days: int) -> str:
        clamped = min(max(days, _DATE_DAYS[0]), _DATE_DAYS[1])
        return (_EPOCH + timedelta(days=clamped)).strftime("%Y%m%d")

    return day(first), day(last + 1)


@dataclass(frozen=True)
class Scope:
    workspace_id: str
    environment_id: str
    options: RunOptions = RunOptions()

    def where(
        self, params: Params, more: Callable[[Params], Sequence[str]] = lambda _: ()
    ) -> Condition:
        """The tenant filter, then the conditions ``more`` adds (their values bound after
        the tenant's, so statements read in a fixed order)."""
        # :IMPORTANT: the tenant filter comes first and is never optional.
        workspace = params.add(self.workspace_id, "String")
        environment = params.add(self.environment_id, "String")
        added = list(more(params))
        for part in added:
            _refuse_widening(part)
        parts = [f"workspace_id = {workspace}", f"environment_id = {environment}", *added]
        return Condition(_SEAL, " AND ".join(parts))

    def select(
        self,
        columns: str,
        table: str,
        condition: Condition,
        tail: str = "",
        longer_than: str | None = None,
    ) -> Select:
        """``SELECT columns FROM table WHERE condition tail``; the tail may add conditions
        (`` AND ..``), not widen the tenant's. ``longer_than`` (a bound UInt32): only the
        events whose text is longer, asked first of the text's sizes alone (``PREWHERE``),
        so that the text is read only where they are: in a WHERE that also reads the
        text, the engine reads it whole for both (484 MB over 1M events, against 8)."""
        _refuse_widening(tail)
        before = f" PREWHERE raw.size > {longer_than}" if longer_than is not None else ""
        return Select(_SEAL, f"SELECT {columns} FROM {table}{before} WHERE {condition.sql}{tail}")

    def dictionary(
        self, params: Params, table: str, index: str, test: str, timeframe: Timeframe
    ) -> str:
        """A scalar subquery: ``(parts, tokens)``, the names of ``table``'s parts of the
        timeframe's days that hold the text ``index`` (written by a merge; an INSERT that
        leaves the indexes to merges writes a part without), and the tokens of theirs for
        which ``test`` (SQL over ``token``) holds. Every tenant's tokens: a needle looks
        them up in this tenant's rows, where only the tenant's own can be found, so what
        it reads never reaches an answer. One read of the dictionary gives both, so a
        part a merge writes meanwhile is in neither (the caller reads such parts' rows)."""
        database, name = table.split(".")
        for identifier in (database, name, index):
            if not _IDENTIFIER.fullmatch(identifier):
                raise LimelightError(f"not a plain name: {identifier!r}")
        # The read is allowed word for word (``_refuse_unscoped_reads``): what it holds
        # must read no table of its own.
        if _TABLE_READ.search(_QUOTED.sub("``", test)):
            raise LimelightError(f"a table read in a dictionary's test: {test[:200]!r}")
        first, after = partition_days(timeframe)
        read = (
            f"(SELECT (groupUniqArray(part_name), groupUniqArrayIf(token, {test}))"
            f" FROM mergeTreeTextIndex({database}, {name}, {index})"
            f" WHERE part_name >= {params.add(first, 'String')}"
            f" AND part_name < {params.add(after, 'String')})"
        )
        params.dictionary_reads.append(read)
        return read

    def around(self, source: Select | Sequence[Select], columns: str, tail: str = "") -> Select:
        """``SELECT columns FROM (source) tail``: over one SELECT, or the rows of several
        (``(a) UNION ALL (b)``)."""
        inner = (
            source.sql
            if isinstance(source, Select)
            else " UNION ALL ".join(f"({s.sql})" for s in source)
        )
        return Select(_SEAL, f"SELECT {columns} FROM ({inner}){tail}")

    def statement(
        self,
        select: Select,
        params: Params,
        columns: Sequence[str],
        engine: Sequence[tuple[str, int]] = (),
    ) -> CompiledQuery:
        """The whole statement: ``select`` closed by the run's limits and the ``engine``
        settings it asks for (names and numbers the code writes), its bound values, and
        the names it selects, in order. Refused when it reads a table anywhere (its
        columns, a tail's subquery, a UNION) other than under this tenant's filter, and
        with a 400 when it is longer than the engine parses."""
        _refuse_unscoped_reads(select.sql, params, self)
        sql = select.sql + self.settings() + engine_settings(engine)
        _refuse_too_large(sql)
        return CompiledQuery(_SEAL, sql, params.values, tuple(columns))

    def settings(self) -> str:
        """The run's limits, and what the statements need of the engine."""
        options = self.options
        # Dynamic (mixed-type) JSON values are allowed as group and sort keys: grouping by
        # the stored value keeps 5 and "5" apart, which is what the user sent. On a
        # cluster (Distributed tables) a subquery in IN runs once over every shard and its
        # set goes to each ('global'), as on one server: events go to a shard at random,
        # so a trace's spans lie on several, and a set each shard made of its own spans
        # (the traces with a span of a service, a page of the slowest) would leave out its
        # spans on the others. One server ignores the setting.
        return (
            f" SETTINGS max_execution_time = {float(options.max_execution_s):g},"
            f" max_result_bytes = {int(options.max_result_bytes):d},"
            " result_overflow_mode = 'throw',"
            f" max_memory_usage = {int(options.max_memory_bytes):d},"
            " allow_suspicious_types_in_group_by = 1, allow_suspicious_types_in_order_by = 1,"
            " output_format_json_quote_64bit_integers = 0, output_format_json_quote_denormals = 0,"
            " distributed_product_mode = 'global',"
            # A needle (query.needle) is looked up in the words and phrases indexes'
            # dictionaries from two characters on, however many tokens hold it: past
            # the engine's defaults (4 characters, 50 tokens) it would read raw instead.
            " text_index_like_min_pattern_length = 2,"
            " text_index_like_max_postings_to_read = 100000,"
            # A regex that is a few needles is their LIKEs joined by OR, each answered
            # from a dictionary (0.3 MB read for three over 100,000 events). From four on,
            # the engine would make them one multiSearchAny over the index's expression,
            # computed from raw for every event (26 MB read).
            " optimize_or_like_chain = 0,"
            # The statement's bytes are the bound (MAX_STATEMENT_BYTES): below them an IN
            # of 12,500 numbers went past the engine's 50,000 elements of a syntax tree
            # and the run failed. The most elements found under the byte bound, 90,309
            # (an IN of 15,000 numbers), is a third of this.
            f" max_ast_elements = {MAX_STATEMENT_BYTES:d}"
        )
