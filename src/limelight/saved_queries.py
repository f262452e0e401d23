"""Saved queries of an environment, as the Queries API and the console keep them.

Fields are validated before they are stored; a change may not take away a
calculation an alert watches (400 naming it), and a query an alert uses or a
board shows cannot be deleted (403 naming them).
"""

from __future__ import annotations

from typing import Any

from limelight.alerts.service import check_query_change
from limelight.errors import BadRequest
from limelight.query.spec import fields_to_json, validate_fields
from limelight.store.meta import managed_repo
from limelight.store.meta import queries_repo as repo
from limelight.store.meta.db import MetaDB
from limelight.store.meta.queries_models import SavedQuery
from limelight.tenant import Tenant
from limelight.times import iso_utc
from limelight.validation import line_problem

# Set by the service; ignored when a client sends them.
SERVICE_FIELDS = ("id", "created_at", "updated_at", "author")
# The author of a query saved without one, by a key that had no owner (migration 0004).
UNKNOWN_AUTHOR = "unknown"


def query_document(query: SavedQuery) -> dict[str, Any]:
    """The full query: its set fields plus what the service sets."""
    return {
        **query.fields,
        "id": query.id,
        "created_at": iso_utc(query.created_at),
        "updated_at": iso_utc(query.updated_at),
        "author": query.author or UNKNOWN_AUTHOR,
    }


def writable(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in SERVICE_FIELDS}


# A query's name, as long as an alert's may be, on one line: checked where it is written
# (a name stored before the rule stays readable, and its query runs).
MAX_NAME = 200


def check_name(sent: dict[str, Any]) -> None:
    name = sent.get("name")
    problem = line_problem(name, MAX_NAME) if isinstance(name, str) else None
    if problem is not None:
        raise BadRequest(message="Invalid query", errors=[{"field": "name", "message": problem}])


def create(
    meta: MetaDB,
    tenant: Tenant,
    data: dict[str, Any],
    author: str,
    managed_id: str | None = None,
) -> str:
    """The new query's id; 400 listing every invalid field. ``managed_id``: the id a
    folder of resources gives it, recorded with it (``managed_repo``)."""
    if managed_id is not None:
        managed_repo.check_managed_id(managed_id)
    fields = fields_to_json(validate_fields(writable(data)))
    check_name(data)
    with meta.session(immediate=True) as s:
        query_id = repo.create_query(s, tenant, fields, author).id
        if managed_id is not None:
            managed_repo.record(s, tenant, "query", managed_id, query_id)
        return query_id


def all_queries(meta: MetaDB, tenant: Tenant) -> list[dict[str, Any]]:
    with meta.session() as s:
        return [query_document(q) for q in repo.list_queries(s, tenant)]


def get(meta: MetaDB, tenant: Tenant, query_id: str) -> dict[str, Any]:
    """The query; 404 for an unknown id or another environment's query."""
    with meta.session() as s:
        return query_document(repo.get_query(s, tenant, query_id))


def update(
    meta: MetaDB, tenant: Tenant, query_id: str, data: dict[str, Any], replace: bool = False
) -> dict[str, Any]:
    """The changed query. The fields sent replace the stored ones and the rest stay, or,
    with ``replace``, the fields sent are the whole query."""
    patch = writable(data)
    # One write transaction, so two concurrent updates cannot lose each other's fields.
    with meta.session(immediate=True) as s:
        query = repo.get_query(s, tenant, query_id, lock=True)
        if patch.get("name") != query.fields.get("name"):  # the stored one stays
            check_name(patch)
        fields = validate_fields(patch if replace else {**query.fields, **patch})
        check_query_change(s, tenant, query_id, fields)  # what its alerts watch stays
        merged = fields_to_json(fields)
        return query_document(repo.replace_query_fields(s, tenant, query_id, merged))


def delete(meta: MetaDB, tenant: Tenant, query_id: str) -> None:
    with meta.session(immediate=True) as s:
        repo.delete_query(s, tenant, query_id)
