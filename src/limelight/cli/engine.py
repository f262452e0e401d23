"""What a command reads from the events engine: from the serving process over loopback
(with the secret of ``operator.token``) while one holds the embedded engine, else from
the engine itself, opened for the command.
"""

from __future__ import annotations

from typing import Any

import httpx

from limelight.cli.failures import Unusable
from limelight.data_lock import DataDirLock, Holder, holder, read_operator_token
from limelight.runs.limits import RunLimits
from limelight.runs.lookups import known_datasets
from limelight.settings import Settings
from limelight.store.events import open_event_store
from limelight.tenant import Tenant


def _ask(settings: Settings, server: Holder, path: str, params: dict[str, str]) -> Any:
    token = read_operator_token(settings.data_dir)
    if token is None or not server.url:
        raise Unusable(f"the server holding {settings.data_dir} cannot be asked")
    try:
        answer = httpx.get(
            f"{server.url}{path}",
            params=params,
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
    except httpx.HTTPError as exc:
        raise Unusable(f"the server at {server.url} did not answer: {exc}") from None
    if answer.status_code != 200:
        raise Unusable(f"the server at {server.url} refused ({answer.status_code})")
    return answer.json()


def datasets_held(settings: Settings, tenant: Tenant) -> list[str]:
    """The datasets the environment has held, by name (its recorded paths)."""
    limits = RunLimits.from_settings(settings)
    embedded = settings.events_backend == "chdb"
    if embedded and (server := holder(settings.data_dir)) is not None:
        params = {"workspace_id": tenant.workspace_id, "environment_id": tenant.environment_id}
        found: list[str] = _ask(settings, server, "/operator/datasets", params)["datasets"]
        return found
    if embedded and not (settings.data_dir / "chdb").exists():
        return []  # the engine was never started: no event yet
    lock = DataDirLock(settings.data_dir) if embedded else None
    if lock is not None:
        lock.acquire("")
    store = open_event_store(settings)
    try:
        store.start()
        return known_datasets(store, tenant, limits)
    finally:
        store.close()
        if lock is not None:
            lock.release()
