"""The investigation APIs over 1M and 10M spans, beside a COUNT by service on the same spans.

Spans as OTLP stores them (dataset ``otel``: name, traceId, spanId, parentSpanId,
kind, duration, status.code, error, attributes), four to a trace (a SERVER root at
the gateway, a CLIENT call, the SERVER span of one of six services, an INTERNAL
database span), about 0.5kb each, built by ClickHouse from hashes of the row
number, over 7 days, merged. A region and a plan make some requests slow (the
cause BubbleUp should find), beside 20 attributes of noise.

Every question goes through the API of a server on that data, in turns, so a slower
minute of this shared machine weighs on all alike; each figure is the median of
``repeats`` x ``ROUNDS`` warm runs, and each ratio is to the COUNT by service (a
query run answered in one round trip) of the same round.

Targets (the investigation issue): trace search, services and field values at most
3x the COUNT, BubbleUp at most 10x.

Set LIMELIGHT_BENCH_INVESTIGATE_DIR to keep the generated data between runs.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx
import orjson
from tests.support import launch

from bench.generated import INSERT_SETTINGS, Generated, prepare

if TYPE_CHECKING:
    from bench.run import BenchContext

ROUNDS = 3
TARGETS = {"trace search": 3.0, "services": 3.0, "field values": 3.0, "bubble up": 10.0}

# @name@ is filled in before the statement runs ({name:Type} are parameters).
GENERATE = """
INSERT INTO @table@ (workspace_id, environment_id, dataset, service, namespace, timestamp, id, raw)
SETTINGS @settings@
SELECT {ws:String}, {env:String}, 'otel', service, 'default', fromUnixTimestamp64Milli(ms),
       concat(lower(hex(ms)), lower(hex(n))), raw
FROM (
    SELECT number AS n,
        intDiv(number, 4) AS t,
        number % 4 AS p,
        cityHash64(t, 1) AS h,
        sipHash64(number, 2) AS h2,
        toInt64({start:Int64} + intDiv(t * {span:Int64}, intDiv({count:UInt64}, 4) + 1) + p)
            AS ms,
        ['checkout', 'orders', 'users', 'search', 'payments', 'inventory']
            [bitShiftRight(h, 8) % 6 + 1] AS backend,
        multiIf(p < 2, 'gateway', backend) AS service,
        ['eu-west-1', 'us-east-1', 'ap-south-1', 'eu-west-2'][bitShiftRight(h, 12) % 4 + 1]
            AS region,
        ['free', 'pro', 'team'][bitShiftRight(h, 16) % 3 + 1] AS plan,
        ['/api/orders', '/api/users/{id}', '/api/cart', '/api/search', '/health']
            [bitShiftRight(h, 20) % 5 + 1] AS route,
        region = 'eu-west-2' AND plan = 'free' AS slow,
        bitShiftRight(h, 24) % 50 = 0 AS failed,
        round(exp((bitShiftRight(h2, 8) % 5000000) / 1000000.0) * if(slow, 20, 1)
            / (1 + p), 3) AS duration,
        multiIf(p = 0, concat('GET ', route), p = 1, concat('call ', backend),
                p = 2, concat(backend, ' handler'), 'SELECT') AS name,
        ['SERVER', 'CLIENT', 'SERVER', 'INTERNAL'][p + 1] AS kind,
        concat(
            '{"timestamp":', toString(ms),
            ',"name":"', name,
            '","traceId":"', leftPad(lower(hex(h)), 32, '0'),
            '","spanId":"', leftPad(lower(hex(h2)), 16, '0'),
            if(p = 0, '', concat('","parentSpanId":"',
                leftPad(lower(hex(sipHash64(number - 1, 2))), 16, '0'))),
            '","kind":"', kind,
            '","duration":', toString(duration),
            ',"status":{"code":"', if(failed AND p = 2, 'ERROR', 'UNSET'), '"}',
            if(failed AND p = 2, ',"error":"connection refused"', ''),
            ',"attributes":{"http.route":"', route,
            '","region":"', region, '","plan":"', plan,
            '","user.id":', toString(1 + bitShiftRight(h, 32) % 50000),
            arrayStringConcat(arrayMap(i -> concat(',"noise', toString(i), '":"v',
                toString(cityHash64(number, i) % 4), '"'), range(20))),
            '}}'
        ) AS raw
    FROM numbers({offset:UInt64}, {rows:UInt64})
)
"""


@dataclass
class Size(Generated):
    timings: dict[str, list[float]] = field(default_factory=dict)
    ratios: dict[str, list[float]] = field(default_factory=dict)
    answers: dict[str, str] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)  # timed runs refused (their time kept)


def _data_dir(ctx: BenchContext) -> Path:
    kept = os.environ.get("LIMELIGHT_BENCH_INVESTIGATE_DIR")
    return Path(kept) if kept else ctx.scratch("investigate")


def _prepare(ctx: BenchContext, data_dir: Path, counts: list[int]) -> list[Size]:
    def statement(table: str) -> str:
        return GENERATE.replace("@table@", table).replace("@settings@", INSERT_SETTINGS)

    generated = prepare(ctx, data_dir, counts, "investigate", "spans", statement)
    return [Size(g.events, g.tenant, g.admin_key, g.frm, g.to) for g in generated]


def _ok(response: httpx.Response) -> Any:
    if response.status_code != 200:
        raise RuntimeError(f"{response.request.url}: {response.status_code} {response.text[:300]}")
    return orjson.loads(response.content)


def _questions(c: httpx.Client, size: Size) -> dict[str, Callable[[], Any]]:
    """Each question as one call that returns the parsed answer."""
    span = {"from": size.frm, "to": size.to}
    window = f"from={size.frm}&to={size.to}"
    count = {
        "query": {
            "namespaces": [{"type": "dataset", "value": "otel"}],
            "calculations": [{"operator": "COUNT"}],
            "group_bys": [{"key": "_service"}],
        },
        **span,
    }
    slow = {"key": "duration", "operation": ">", "value": 80}
    return {
        "COUNT by service": lambda: _ok(c.post("/v1/query_run", params={"wait": 60}, json=count)),
        "trace search: latest": lambda: _ok(c.post("/v1/traces/search", json=span)),
        "trace search: slowest of a service": lambda: _ok(
            c.post(
                "/v1/traces/search",
                json={**span, "services": ["payments"], "orderBy": "duration"},
            )
        ),
        "trace search: errors, a filter": lambda: _ok(
            c.post(
                "/v1/traces/search",
                json={
                    **span,
                    "status": "error",
                    "filters": [
                        {"key": "attributes.region", "operation": "=", "value": "eu-west-2"}
                    ],
                },
            )
        ),
        "services": lambda: _ok(c.get(f"/v1/services?dataset=otel&{window}")),
        "services: operations": lambda: _ok(
            c.get(f"/v1/services/gateway/operations?dataset=otel&{window}")
        ),
        "field values: attributes.region": lambda: _ok(
            c.get(f"/v1/datasets/otel/keys/attributes.region/values?{window}")
        ),
        "field values: name": lambda: _ok(c.get(f"/v1/datasets/otel/keys/name/values?{window}")),
        "field values: user.id, filtered": lambda: _ok(
            c.get(
                "/v1/datasets/otel/keys/attributes.user.id/values?"
                + window
                + "&filters="
                + quote(orjson.dumps([{"key": "kind", "operation": "=", "value": "SERVER"}]))
            )
        ),
        "bubble up: duration > 80": lambda: _ok(
            c.post(
                "/v1/bubble_up",
                json={
                    "namespaces": [{"type": "dataset", "value": "otel"}],
                    "filters": [{"key": "kind", "operation": "=", "value": "SERVER"}],
                    **span,
                    "selection": {"filters": [slow]},
                },
            )
        ),
    }


def _summary(name: str, answer: Any) -> str:
    if "traces" in answer:
        first = answer["traces"][0] if answer["traces"] else {}
        slowest = f"{first.get('rootName')} {first.get('duration')} ms"
        return f"{len(answer['traces'])} traces, first {slowest}"
    for rows in ("services", "operations"):
        if rows in answer:
            return f"{len(answer[rows])} rows, first {answer[rows][:1]}"
    if "dimensions" in answer:
        dims = answer["dimensions"][:2]
        top = [(d["key"], d["values"][0]["value"] if d["values"] else None) for d in dims]
        total = answer["selection"] + answer["baseline"]
        read = answer.get("sample") or {}
        sample = f"sample {read.get('selection', 0):,} + {read.get('baseline', 0):,}"
        sampled = f"sampled {answer.get('sampled')} ({sample})"
        return f"selection {answer['selection']:,} of {total:,}, top {top}, {sampled}"
    if "values" in answer:
        top = [(v["value"], v["count"]) for v in answer["values"][:3]]
        held = f"{answer['events']:,} events, ~{answer['distinct']:,} distinct"
        return f"{held}, top {top}, sampled {answer['sampled']}"
    data = answer.get("data") or {}
    return f"{len(data.get('aggregates', []))} groups"


def _time(size: Size, url: str, repeats: int) -> None:
    with httpx.Client(base_url=url, headers={"Authorization": size.admin_key}, timeout=120) as c:
        questions = _questions(c, size)
        for name, ask in questions.items():  # warm, and the answer shown
            try:
                size.answers[name] = _summary(name, ask())
            except RuntimeError as exc:  # a refusal (a 503 past the run limit) is a figure too
                size.answers[name] = f"FAILED: {exc}"
        for _ in range(repeats):
            base = None
            for name, ask in questions.items():
                started = time.perf_counter()
                try:
                    ask()
                except RuntimeError:
                    size.failed[name] = size.failed.get(name, 0) + 1
                took = time.perf_counter() - started
                size.timings.setdefault(name, []).append(took)
                if base is None:
                    base = took
                size.ratios.setdefault(name, []).append(took / base)


def _print(sizes: list[Size]) -> None:
    head = f"{'spans':>11}  {'question':<38}{'median s':>10}{'x COUNT':>9}{'target':>8}"
    print(head)
    print("-" * len(head))
    misses = []
    for size in sizes:
        for name, took in size.timings.items():
            ratio = statistics.median(size.ratios[name])
            kind = next((k for k in TARGETS if name.startswith(k)), None)
            target = TARGETS.get(kind or "", 0.0)
            mark = f"{target:>7g}x" if target else f"{'':>8}"
            print(
                f"{size.events:>11,}  {name:<38}{statistics.median(took):>10.3f}{ratio:>9.2f}{mark}"
            )
            if size.failed.get(name):
                misses.append(f"{size.events:,} {name}: refused {size.failed[name]}x")
            if target and ratio > target:
                misses.append(f"{size.events:,} {name}: {ratio:.2f}x (target {target:g}x)")
    print()
    for size in sizes:
        for name, summary in size.answers.items():
            print(f"  {size.events:>11,}  {name:<38}{summary}")
    print()
    for miss in misses:
        print(f"  missed: {miss}")
    if not misses:
        print("  all targets met")


def run(ctx: BenchContext) -> None:
    counts = [100_000, 1_000_000] if ctx.quick else [1_000_000, 10_000_000]
    data_dir = _data_dir(ctx)
    data_dir.mkdir(parents=True, exist_ok=True)
    sizes = _prepare(ctx, data_dir, counts)
    server = launch(data_dir / "server", {"LIMELIGHT_DATA_DIR": str(data_dir)})
    try:
        for round_no in range(1, ROUNDS + 1):
            for size in sizes:
                _time(size, server.url, ctx.repeats)
            ctx.log(f"  round {round_no}/{ROUNDS} timed")
    finally:
        server.stop()
    print(f"data: {data_dir} ({', '.join(f'{n:,}' for n in counts)} spans over 7 days, merged)")
    print(f"medians of {ROUNDS} x {ctx.repeats} warm runs through the API, in turns\n")
    _print(sizes)
