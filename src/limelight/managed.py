"""What ``limelight apply`` created in an environment: each resource under its managed id.

The command line reads it to match a folder's resources to the environment's
(``GET /v1/managed``) and to know which it may delete with ``--prune``: only
these, never what was made in the console or by hand.
"""

from __future__ import annotations

from typing import Any

from limelight.store.meta import managed_repo
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant


def all_managed(meta: MetaDB, tenant: Tenant) -> list[dict[str, Any]]:
    with meta.session() as s:
        return [
            {"type": row.kind, "managed_id": row.managed_id, "id": row.resource_id}
            for row in managed_repo.list_managed(s, tenant)
        ]
