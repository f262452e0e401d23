"""The resources an ``apply`` created, each under its managed id (the id its folder gives it).

``record`` runs in the transaction that creates the resource, so a resource an
apply created always has its row: a second apply finds it by that id and never
makes it twice. Rows are per tenant, like every read here.
"""

from __future__ import annotations

import re
from typing import Literal

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from limelight.errors import BadRequest, Conflict
from limelight.store.meta.managed_models import ManagedResource
from limelight.tenant import Tenant

Kind = Literal["query", "alert", "board"]
# A resource's id in a folder (Baselime's rule for them).
MANAGED_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


def check_managed_id(managed_id: str) -> None:
    if not MANAGED_ID.fullmatch(managed_id):
        raise BadRequest(
            message="Invalid managed_id",
            errors=[
                {
                    "field": "managed_id",
                    "message": "1 to 128 letters, digits, '-' or '_'",
                }
            ],
        )


def record(s: Session, tenant: Tenant, kind: Kind, managed_id: str, resource_id: str) -> None:
    """Note that the resource was created under ``managed_id``; 409 when the id already
    names another resource of its kind in the environment."""
    check_managed_id(managed_id)
    key = (tenant.workspace_id, tenant.environment_id, kind, managed_id)
    held = s.get(ManagedResource, key)
    if held is not None:
        raise Conflict(f"the managed id {managed_id!r} already names the {kind} {held.resource_id}")
    s.add(
        ManagedResource(
            workspace_id=tenant.workspace_id,
            environment_id=tenant.environment_id,
            kind=kind,
            managed_id=managed_id,
            **{f"{kind}_id": resource_id},
        )
    )
    try:
        s.flush()
    except IntegrityError:  # the same id recorded by a concurrent apply (PostgreSQL)
        raise Conflict(f"the managed id {managed_id!r} was just taken by another apply") from None


def list_managed(s: Session, tenant: Tenant) -> list[ManagedResource]:
    return list(
        s.scalars(
            select(ManagedResource)
            .where(
                ManagedResource.workspace_id == tenant.workspace_id,
                ManagedResource.environment_id == tenant.environment_id,
            )
            .order_by(ManagedResource.kind, ManagedResource.managed_id)
        )
    )
