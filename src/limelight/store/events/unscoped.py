"""Statements over every tenant's events, or over none's: the explicit way around the
tenant guard, for the few that need it.

A tenant's events are read with ``EventStore.read``, which takes only a statement
``Scope`` made (``limelight.scoped``). What is not one tenant's read goes through
``unscoped(store)`` instead: a backup's count of the events it holds, retention's
expiry (partitions dropped and rows deleted over every tenant); the DDL at start and
the bytes the engine holds stay inside the transports. The import-linter contracts
(pyproject.toml) let only ``store.events``, ``backups`` and ``retention`` import this
module, and only the store, backups and the backup command name the transports'
classes, which offer the same: the API, the console, the runs and the compiler can do
neither, and a test checks the contracts catch them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from limelight.store.events.base import EventStore, QueryResult


@runtime_checkable
class UnscopedReader(Protocol):
    """Plain SQL over the events tables, no tenant filter added: what both transports
    offer beside ``EventStore``."""

    def query(
        self, sql: str, params: Mapping[str, Any], columns: Sequence[str] | None = None
    ) -> QueryResult:
        """Run a SELECT with bound parameters; rows as dicts. ``columns``: the names the
        statement selects, in order; an answer with others is refused (``StoreError``)."""

    def command(self, sql: str, params: Mapping[str, Any] | None = None) -> None:
        """Run a statement that returns no rows (DDL, INSERT .. SELECT, mutations)."""

    @property
    def table(self) -> str:
        """The fully qualified events table name."""

    @property
    def data_table(self) -> str:
        """The events table that holds the rows (a shard's own on a cluster)."""

    @property
    def on_cluster(self) -> str:
        """`` ON CLUSTER <name>`` for statements every node must run; else empty."""


def unscoped(store: EventStore) -> UnscopedReader:
    """``store``'s statements without a tenant filter."""
    if not isinstance(store, UnscopedReader):
        raise TypeError(f"{type(store).__name__} offers no unscoped statements")
    return store
