"""What the operator's CLI asks of the serving process: only from this machine
(loopback), only with the secret of ``data_dir/operator.token``, which only the
operator's account can read. Everyone else gets the 404 of an unknown path.

The embedded engine allows one process per data directory, so while the server
runs, a consistent backup of the events can only be made here, and the datasets
an environment holds only be read here.
"""

from __future__ import annotations

import hmac
import ipaddress
import time

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from limelight.backups import make_backup
from limelight.data_lock import read_operator_token
from limelight.errors import NotFound
from limelight.ids import new_id
from limelight.runs.lookups import known_datasets
from limelight.store.events.factory import backups_dir
from limelight.tenant import Tenant
from limelight.web.problems import json_response
from limelight.web.request import runtime_of

BACKUP_PATH = "/operator/backup"
DATASETS_PATH = "/operator/datasets"


def _from_this_machine(request: Request) -> bool:
    # The connection's own peer: a forwarded address never makes a client local.
    peer = request.scope.get("client")
    try:
        return peer is not None and ipaddress.ip_address(peer[0]).is_loopback
    except ValueError:
        return False


def _operator(request: Request) -> None:
    expected = read_operator_token(runtime_of(request).settings.data_dir)
    given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    if not (
        _from_this_machine(request)
        and expected
        and hmac.compare_digest(given.encode(), expected.encode())
    ):
        raise NotFound()


async def backup(request: Request) -> Response:
    """Make a backup under ``data_dir/backups``; answers its directory and manifest."""
    _operator(request)
    runtime = runtime_of(request)
    events = runtime.events
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = backups_dir(runtime.settings) / f"{stamp}-{new_id()}"
    manifest = await run_in_threadpool(make_backup, runtime.settings, runtime.meta, events, target)
    return json_response({"path": str(target), "manifest": manifest})


async def datasets(request: Request) -> Response:
    """The datasets an environment has held (``?workspace_id=&environment_id=``), for
    the CLI's ``datasets retention``, which cannot read the engine the server holds."""
    _operator(request)
    runtime = runtime_of(request)
    tenant = Tenant(
        request.query_params.get("workspace_id", ""),
        request.query_params.get("environment_id", ""),
    )
    names = await run_in_threadpool(known_datasets, runtime.events, tenant, runtime.runs.limits)
    return json_response({"datasets": names})


def operator_routes() -> list[Route]:
    return [
        Route(BACKUP_PATH, backup, methods=["POST"], include_in_schema=False),
        Route(DATASETS_PATH, datasets, methods=["GET"], include_in_schema=False),
    ]
