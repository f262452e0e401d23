"""What every read that answers at once does on the store: its scope, the types its keys
are stored as, its statements within the run limits, its deadline.

The investigation reads (``runs.investigate``) and the reads over spans
(``runs.spans``) are served this way. A failure of the engine is said in the
request's terms: a regular expression or LIKE pattern the engine cannot compile
is a 400 naming its field, anything else (the time limit, memory) a 503.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from limelight.errors import BadRequest, StoreError, Unavailable
from limelight.query.compile import json_keys, presence_keys
from limelight.query.keys import MAX_LISTED_SUB_PATHS, StoredTypes
from limelight.query.plans import CompiledQuery, PatternFields
from limelight.query.scope import Scope
from limelight.query.spec import QueryFields
from limelight.runs.engine_errors import CANNOT_COMPILE_REGEXP, CANNOT_PARSE_ESCAPE_SEQUENCE
from limelight.runs.limits import RunLimits, store_failure_message, timeout_message
from limelight.runs.lookups import paths_below, stored_types
from limelight.store.events.base import EventStore
from limelight.tenant import Tenant

NO_PATTERNS = PatternFields()


def scope_of(tenant: Tenant, limits: RunLimits) -> Scope:
    """The tenant filter and the run limits every statement of the read gets."""
    return Scope(tenant.workspace_id, tenant.environment_id, limits.run_options())


def read_rows(
    store: EventStore,
    statement: CompiledQuery,
    limits: RunLimits,
    patterns: PatternFields = NO_PATTERNS,
) -> list[dict[str, Any]]:
    """The statement's rows; ``BadRequest`` naming the fields of a pattern the engine
    cannot compile, ``Unavailable`` for any other refusal."""
    try:
        return store.read(statement).rows
    except StoreError as exc:
        message = store_failure_message(exc, limits, patterns)
        if exc.code in (CANNOT_COMPILE_REGEXP, CANNOT_PARSE_ESCAPE_SEQUENCE):
            fields = patterns.regex if exc.code == CANNOT_COMPILE_REGEXP else patterns.like
            errors = [{"field": f, "message": message} for f in fields]
            raise BadRequest(message, errors=errors or None) from exc
        raise Unavailable(message) from exc


def types_of(
    store: EventStore,
    tenant: Tenant,
    fields: Sequence[QueryFields],
    limits: RunLimits,
    also: Sequence[str] = (),
) -> StoredTypes:
    """The types of the keys the ``fields`` read (and of ``also``), and the paths below
    those whose presence they test, as a run looks them up."""
    keys = sorted({*also, *(k for f in fields for k in json_keys(f))})
    presence = sorted({k for f in fields for k in presence_keys(f)})
    try:
        held = stored_types(store, tenant, keys, limits)
        below = paths_below(store, tenant, presence, MAX_LISTED_SUB_PATHS, limits)
    except StoreError as exc:
        raise Unavailable(store_failure_message(exc, limits)) from exc
    return StoredTypes(held, below)


def check_deadline(deadline: float, limits: RunLimits) -> None:
    """503 once the read has outlived a run's time limit (its statements run one by one,
    each within it)."""
    if time.monotonic() >= deadline:
        raise Unavailable(timeout_message(limits.max_run_seconds))
