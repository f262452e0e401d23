"""The one kind of statement the events store reads for a tenant.

``EventStore.read`` takes a ``ScopedStatement`` and nothing else, and the only
statements there are come from ``limelight.query.scope``: this class cannot be
made (it is abstract) and refuses any subclass defined elsewhere, and the
subclass there (``CompiledQuery``) is made by ``Scope.statement`` alone, from a
SELECT whose WHERE begins with the tenant filter. A plain SQL string is a type
error for mypy and a ``TypeError`` at run time (``require_scoped``).

It lives below both the compiler and the stores so that each can name it
without importing the other. Reads over every tenant's events (backups,
retention, start-up) use ``store.events.unscoped`` instead, which the
import-linter contracts confine to those modules.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

# The module whose statements carry the tenant filter (see ``Scope``).
SCOPE_MODULE = "limelight.query.scope"


class ScopedStatement(ABC):
    """A SELECT over one tenant's events, with its bound values and the columns it selects."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # :IMPORTANT: a statement type defined anywhere else could skip the tenant filter.
        if cls.__module__ != SCOPE_MODULE:
            raise TypeError(f"statements over a tenant's events are made in {SCOPE_MODULE}")
        super().__init_subclass__(**kwargs)

    @property
    @abstractmethod
    def sql(self) -> str: ...

    @property
    @abstractmethod
    def params(self) -> Mapping[str, Any]: ...

    @property
    @abstractmethod
    def columns(self) -> tuple[str, ...]:
        """The names the statement selects, in order: the store accepts only an answer
        with exactly these (see ``store.events.base.decode_result``)."""


def require_scoped(statement: object) -> ScopedStatement:
    """``statement`` when ``Scope`` made it, else ``TypeError``: what a tenant's read
    accepts, checked at run time too (a caller typed ``Any`` escapes mypy)."""
    if not isinstance(statement, ScopedStatement):
        raise TypeError(
            f"the events store reads only statements made by Scope, not {type(statement).__name__}"
        )
    return statement
