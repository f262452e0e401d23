"""The console's pages over 1M events, beside the same queries through the API.

Data: the events the queries section generates (``bench/queries.py``: one
``INSERT ... SELECT`` per million, kept between runs in
``LIMELIGHT_BENCH_QUERIES_DIR``), 1M events over 7 days (100,000 with
``--quick``). The console's default timeframes end now; here they end where the
data ends (the same length, given as a custom timeframe), so they hold as many
events as on a server receiving them.

Pages, as a signed-in user opens them (medians of ROUNDS x ``repeats``, warm):
- events explorer, as it opens: the newest 50 events of a dataset over the last
  hour, the count series over that hour, the dataset list (24 hours) and the
  dataset's keys;
- datasets page: each dataset's count and last event over the last 24 hours.
For each page: the server's time (its ``Server-Timing``) and the wall time of
the GET over loopback, beside the wall time of the same queries through the
API (``POST /v1/query_run?wait=``, ``GET /v1/datasets``, ``GET
/v1/datasets/<name>/keys``), one after the other, and their sum.
"""

from __future__ import annotations

import re
import statistics
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import orjson
from tests.e2e.oauth_support import post_forms
from tests.support import launch

from bench.queries import Size, _data_dir, _prepare
from limelight.auth.passwords import hash_password
from limelight.store.meta import accounts_repo, repos
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow
from limelight.tenant import Tenant

if TYPE_CHECKING:
    from bench.run import BenchContext

HOUR = 3_600_000
DAY = 24 * HOUR
ROUNDS = 3
TARGET_MS = 200.0
DATASET = "logs"
PAGE_SIZE = 50


def _size(ctx: BenchContext, data_dir: Path, events: int) -> tuple[Path, Size]:
    """The data directory and the size of ``events`` events: the queries section's when it
    generated that many, else a directory of their own beside it."""
    manifest = data_dir / "bench-queries.json"
    if manifest.exists():
        saved = orjson.loads(manifest.read_bytes())
        for s in saved["sizes"]:
            if s["events"] == events:
                ctx.log(f"  reusing the events in {data_dir}")
                tenant = Tenant(s["ws"], s["env"])
                return data_dir, Size(s["events"], tenant, s["key"], s["frm"], s["to"])
    own = data_dir / f"console-{events}"
    own.mkdir(parents=True, exist_ok=True)
    [size] = _prepare(ctx, own, [events])
    return own, size


def _console_user(data_dir: Path, workspace_id: str) -> tuple[str, str]:
    """A member of the bench's workspace, written into the directory's metadata."""
    meta = MetaDB(f"sqlite:///{data_dir / 'meta.db'}")
    email, password = f"bench-{uuid.uuid4().hex[:8]}@example.com", uuid.uuid4().hex
    try:
        with meta.session(immediate=True) as s:
            user = accounts_repo.create_user(s, email, hash_password(password), utcnow())
            accounts_repo.add_member(s, user, repos.find_workspace(s, workspace_id), utcnow())
    finally:
        meta.dispose()
    return email, password


def _log_in(url: str, email: str, password: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=60)
    form = post_forms(client.get("/login").text, "/login")[0]
    answer = client.post("/login", data=dict(form.fields) | {"email": email, "password": password})
    if answer.status_code != 303:
        raise RuntimeError(f"could not log in to the console: {answer.status_code}")
    return client


def _page(client: httpx.Client, path: str) -> tuple[float, float]:
    """(server ms, wall ms) of one page."""
    started = time.perf_counter()
    answer = client.get(path)
    wall = (time.perf_counter() - started) * 1000
    if answer.status_code != 200 or 'class="error"' in answer.text:
        raise RuntimeError(f"{path} answered {answer.status_code}: {answer.text[:300]}")
    found = re.fullmatch(r"app;dur=([\d.]+)", answer.headers["server-timing"])
    assert found
    return float(found.group(1)), wall


def _timed(call: Callable[[], httpx.Response]) -> float:
    started = time.perf_counter()
    answer = call()
    elapsed = (time.perf_counter() - started) * 1000
    answer.raise_for_status()
    body = answer.json()
    if "query_run" in body and body["query_run"]["status"] != "COMPLETED":
        raise RuntimeError(f"query run failed: {body['query_run']}")
    return elapsed


def run(ctx: BenchContext) -> None:
    events = 100_000 if ctx.quick else 1_000_000
    data_dir, size = _size(ctx, _data_dir(ctx), events)
    email, password = _console_user(data_dir, size.tenant.workspace_id)
    end = size.to
    hour = {"from": end - HOUR, "to": end}
    day = {"from": end - DAY, "to": end}
    env = f"/env/{size.tenant.environment_id}"
    pages = {
        "events explorer": f"{env}/events?ds={DATASET}&from={hour['from']}&to={hour['to']}",
        "datasets": f"{env}/datasets?from={day['from']}&to={day['to']}",
    }
    newest = {"namespaces": [{"type": "dataset", "value": DATASET}]}
    count = {**newest, "calculations": [{"operator": "COUNT"}]}
    api_calls: dict[str, dict[str, Callable[[httpx.Client], httpx.Response]]] = {
        "events explorer": {
            f"newest {PAGE_SIZE} events": lambda c: c.post(
                "/v1/query_run?wait=30", json={"query": newest, **hour, "limit": PAGE_SIZE}
            ),
            "count series": lambda c: c.post(
                "/v1/query_run?wait=30", json={"query": count, **hour}
            ),
            "datasets 24h": lambda c: c.get("/v1/datasets", params=day),
            "dataset keys": lambda c: c.get(f"/v1/datasets/{DATASET}/keys"),
        },
        "datasets": {"datasets 24h": lambda c: c.get("/v1/datasets", params=day)},
    }
    timings: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        timings.setdefault(name, []).append(value)

    server = launch(data_dir / "server-console", {"LIMELIGHT_DATA_DIR": str(data_dir)})
    try:
        console = _log_in(server.url, email, password)
        api = httpx.Client(
            base_url=server.url, headers={"Authorization": size.admin_key}, timeout=60
        )
        for page, path in pages.items():  # warm: caches, marks, the page cache
            _page(console, path)
            for call in api_calls[page].values():
                _timed(lambda call=call: call(api))
        for _ in range(ROUNDS * ctx.repeats):
            for page, path in pages.items():
                server_ms, wall_ms = _page(console, path)
                add(f"{page}|server", server_ms)
                add(f"{page}|wall", wall_ms)
                total = 0.0
                for name, call in api_calls[page].items():
                    ms = _timed(lambda call=call: call(api))
                    add(f"{page}|api {name}", ms)
                    total += ms
                add(f"{page}|api sum", total)
        console.close()
        api.close()
    finally:
        server.stop()

    def median(key: str) -> float:
        return statistics.median(timings[key])

    print(
        f"data: {data_dir} ({size.events:,} events over 7 days); timeframes end at the data's end"
    )
    print(f"medians of {ROUNDS} x {ctx.repeats} warm loads, milliseconds\n")
    head = f"{'page':<18}{'server':>9}{'wall':>9}   same queries through the API (wall)"
    print(head)
    print("-" * 100)
    misses = []
    for page in pages:
        parts = ", ".join(f"{name} {median(f'{page}|api {name}'):.1f}" for name in api_calls[page])
        server_ms = median(f"{page}|server")
        print(
            f"{page:<18}{server_ms:>9.1f}{median(f'{page}|wall'):>9.1f}   "
            f"{parts}; sum {median(f'{page}|api sum'):.1f}"
        )
        if server_ms >= TARGET_MS:
            misses.append(f"{page}: {server_ms:.0f} ms")
    print(f"\ntarget: server time per page under {TARGET_MS:.0f} ms over {size.events:,} events")
    print("  missed: " + "; ".join(misses) if misses else "  all met")
