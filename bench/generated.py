"""Generated data directories the sections share: a workspace with one environment and
admin key per size, events built by ClickHouse with one ``INSERT ... SELECT FROM
numbers()`` per million, merged, and a manifest to reuse them.

A section gives its statement (``{ws}``, ``{env}``, ``{start}``, ``{span}``,
``{count}``, ``{offset}`` and ``{rows}`` are its parameters) and gets each size's
tenant, key and timeframe back.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from limelight.auth.api_keys import mint_key
from limelight.store.events.base import JSON_PARSE_SETTINGS, settings_clause
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.store.meta import repos
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant

if TYPE_CHECKING:
    from bench.run import BenchContext

CHUNK = 1_000_000
SPAN_MS = 7 * 24 * 3600 * 1000
INSERT_SETTINGS = settings_clause({"async_insert": 0, **JSON_PARSE_SETTINGS})


@dataclass
class Generated:
    """One size of a data directory: its events, tenant, admin key and timeframe."""

    events: int
    tenant: Tenant
    admin_key: str
    frm: int
    to: int


def make_tenants(
    meta: MetaDB, counts: list[int], kind: str = "queries", noun: str = "events"
) -> dict[int, tuple[Tenant, str]]:
    """A workspace ``bench-<kind>-...`` with an environment ``<noun>-<count>`` and an
    admin key for each count."""
    with meta.session(immediate=True) as s:
        ws = repos.create_workspace(s, f"bench-{kind}-{time.time_ns()}")
        out = {}
        for count in counts:
            env = repos.create_environment(s, ws, f"{noun}-{count}", redact=False)
            key = mint_key(s, env, "admin", name="bench").value
            out[count] = (Tenant(ws.id, env.id), key)
        return out


def load(store: ChdbEventStore, size: Generated, sql: str, per_insert: int = CHUNK) -> float:
    """Insert the size's events, ``per_insert`` at a time; the seconds it took."""
    started = time.perf_counter()
    for offset in range(0, size.events, per_insert):
        params = {
            "ws": size.tenant.workspace_id,
            "env": size.tenant.environment_id,
            "start": size.frm,
            "span": SPAN_MS,
            "count": size.events,
            "offset": offset,
            "rows": min(per_insert, size.events - offset),
        }
        store.command(sql, params)
    return time.perf_counter() - started


def prepare(
    ctx: BenchContext,
    data_dir: Path,
    counts: list[int],
    kind: str,
    noun: str,
    statement: Callable[[str], str],
) -> list[Generated]:
    """Generate each size's events over 7 days ending a minute ago (``statement`` gives
    the INSERT for the events table), or reuse a kept directory that has them."""
    manifest = data_dir / f"bench-{kind}.json"
    if manifest.exists():
        saved = orjson.loads(manifest.read_bytes())
        if saved["counts"] == counts:
            ctx.log(f"  reusing the {noun} in {data_dir}")
            return [
                Generated(s["events"], Tenant(s["ws"], s["env"]), s["key"], s["frm"], s["to"])
                for s in saved["sizes"]
            ]
    meta = MetaDB(f"sqlite:///{data_dir / 'meta.db'}")
    meta.migrate()
    tenants = make_tenants(meta, counts, kind, noun)
    meta.dispose()
    end = int(time.time() * 1000) - 60_000
    sizes = [Generated(n, *tenants[n], end - SPAN_MS, end + 1) for n in counts]
    store = ChdbEventStore(data_dir / "chdb")
    store.start()
    try:
        sql = statement(store.table)
        for size in sizes:
            took = load(store, size, sql)
            ctx.log(f"  loaded {size.events:,} {noun} in {took:.0f}s")
        # Merge what the loads wrote, as a long-running server would have by now;
        # otherwise the server started next spends the timed runs merging.
        started = time.perf_counter()
        store.command(f"OPTIMIZE TABLE {store.table} FINAL")
        ctx.log(f"  merged the parts in {time.perf_counter() - started:.0f}s")
    finally:
        store.close()
    manifest.write_bytes(orjson.dumps({"counts": counts, "sizes": [_saved(s) for s in sizes]}))
    return sizes


def _saved(size: Generated) -> dict[str, Any]:
    return {
        "events": size.events,
        "ws": size.tenant.workspace_id,
        "env": size.tenant.environment_id,
        "key": size.admin_key,
        "frm": size.frm,
        "to": size.to,
    }
