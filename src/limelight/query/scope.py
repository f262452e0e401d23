"""The one place a statement against a tenant's events gets its tenant filter and limits.

Every SELECT the compiler writes over the events (and over the paths their
keys hold) is assembled by ``Scope.select`` from a ``Condition`` that only
``Scope.where`` makes: the tenant filter comes first in the WHERE, always, and
the run's limits close the statement as SETTINGS. No statement can forget either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from limelight.query.plans import RunOptions
from limelight.query.sql import Params

# The columns that make a stored event whole again (see ``event_json``).
EVENT_COLUMNS = (
    "raw, toUnixTimestamp64Milli(timestamp) AS _timestamp, dataset AS _dataset, "
    "service AS _service, namespace AS _namespace, id AS _id"
)
EVENT_COLUMN_NAMES = ("raw", "_timestamp", "_dataset", "_service", "_namespace", "_id")


@dataclass(frozen=True)
class Condition:
    """A WHERE clause that begins with the tenant filter (made by ``Scope.where`` only)."""

    sql: str


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
        parts = [f"workspace_id = {workspace}", f"environment_id = {environment}", *more(params)]
        return Condition(" AND ".join(parts))

    def select(
        self,
        columns: str,
        table: str,
        condition: Condition,
        tail: str = "",
        *,
        inner: bool = False,
    ) -> str:
        """``SELECT columns FROM table WHERE condition tail SETTINGS <limits>``; ``inner``:
        a subquery, whose settings are those of the statement around it."""
        sql = f"SELECT {columns} FROM {table} WHERE {condition.sql}{tail}"
        return sql if inner else sql + self.settings()

    def settings(self) -> str:
        """The run's limits, and what the statements need of the engine."""
        options = self.options
        # Dynamic (mixed-type) JSON values are allowed as group and sort keys: grouping by
        # the stored value keeps 5 and "5" apart, which is what the user sent. On a
        # cluster (Distributed tables) a subquery in IN runs on each shard over its own
        # events ('local'): each shard's newest times hold the page's, and nothing moves
        # between shards; one server ignores the setting.
        return (
            f" SETTINGS max_execution_time = {float(options.max_execution_s):g},"
            f" max_result_bytes = {int(options.max_result_bytes):d},"
            " result_overflow_mode = 'throw',"
            f" max_memory_usage = {int(options.max_memory_bytes):d},"
            " allow_suspicious_types_in_group_by = 1, allow_suspicious_types_in_order_by = 1,"
            " output_format_json_quote_64bit_integers = 0, output_format_json_quote_denormals = 0,"
            " distributed_product_mode = 'local',"
            # A needle (query.needle) is looked up in the words and phrases indexes'
            # dictionaries from two characters on, however many tokens hold it: past
            # the engine's defaults (4 characters, 50 tokens) it would read raw instead.
            " text_index_like_min_pattern_length = 2,"
            " text_index_like_max_postings_to_read = 100000"
        )
