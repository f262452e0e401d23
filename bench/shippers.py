"""The shippers' formats beside the Events API: the same events through each path.

The events of ``bench.ingest`` (about 0.5kb of JSON each) go, in the same run and in
turns, as Events API arrays, Elasticsearch bulk bodies (``create`` actions, with the
``filter_path`` Filebeat sends), Loki pushes (each event a JSON line of one stream, in
JSON and in snappy protobuf) and Splunk HEC bodies (the objects one after another,
each with its ``time``). 1,000-event bodies come from 4 clients, 10-event bodies from
64. A run of a path ends when every request has its success answer, so each figure
counts events on disk. The ratio of each format to the Events API says what its
decoding costs on top of the shared pipeline (target: 0.8 or more).

The same bodies then go through each format's pipeline in this process (decode,
check, enrich, redaction test; rows handed to a sink that keeps nothing), rounds in
turns: the CPU of an event in the API's own work, which a busy machine skews less
than throughput.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import cramjam
import orjson
from tests.unit.ingest.limits import limits

from bench.ingest import (
    CLIENTS,
    SETTLE_S,
    TINY_CLIENTS,
    Batch,
    HttpSender,
    Measure,
    make_event,
    print_table,
    run_concurrently,
)
from limelight.ingest.es_bulk import ingest_bulk
from limelight.ingest.hec import ingest_events
from limelight.ingest.loki import ingest_push
from limelight.ingest.loki_wire import PushRequest
from limelight.ingest.service import Origin, ingest_body
from limelight.settings import MIB
from limelight.store.events.base import EventRow
from limelight.tenant import Tenant

if TYPE_CHECKING:
    from bench.run import BenchContext

TARGET = 0.8


def _events(count: int, seed: int = 11) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    start = int(time.time() * 1000) - 3_600_000
    return [make_event(rng, start + i) for i in range(count)]


def events_body(events: list[dict[str, Any]]) -> bytes:
    return orjson.dumps(events)


def bulk_body(events: list[dict[str, Any]]) -> bytes:
    action = b'{"create":{}}\n'
    return b"".join(action + orjson.dumps(e) + b"\n" for e in events)


def loki_json_body(events: list[dict[str, Any]]) -> bytes:
    values = [[str(e["timestamp"] * 1_000_000), orjson.dumps(e).decode()] for e in events]
    return orjson.dumps({"streams": [{"stream": {"service_name": "bench"}, "values": values}]})


def loki_protobuf_body(events: list[dict[str, Any]]) -> bytes:
    request = PushRequest()
    stream = request.streams.add(labels='{service_name="bench"}')
    for e in events:
        entry = stream.entries.add(line=orjson.dumps(e).decode())
        entry.timestamp.seconds, millis = divmod(e["timestamp"], 1000)
        entry.timestamp.nanos = millis * 1_000_000
    return bytes(cramjam.snappy.compress_raw(request.SerializeToString()))


def hec_body(events: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps({"event": e, "time": e["timestamp"] / 1000}) for e in events)


# name: (path under the server, body, content type, answer's status, key header)
FORMATS: dict[str, tuple[str, Callable[[list[dict[str, Any]]], bytes], str, int, str]] = {
    "events": ("/events/v1/bench", events_body, "application/json", 202, "x-api-key"),
    "es_bulk": ("/es/bench/_bulk?filter_path=errors,items.*.error,items.*.status", bulk_body,
                "application/x-ndjson", 200, "Bearer"),
    "loki": ("/loki/api/v1/push", loki_json_body, "application/json", 204, "Bearer"),
    "loki_pb": ("/loki/api/v1/push", loki_protobuf_body, "application/x-protobuf", 204, "Bearer"),
    "hec": ("/services/collector", hec_body, "application/json", 200, "Splunk"),
}  # fmt: skip


class FormatSender(HttpSender):
    def __init__(self, url: str, status: int, headers: dict[str, str]) -> None:
        super().__init__(url, headers)
        self.expected_status = status

    def send(self, batch: Batch) -> None:
        answer = self.post(batch)
        if b'"errors":true' in answer:
            raise RuntimeError(f"refused items: {answer[:300]!r}")


def _sender(ctx: BenchContext, name: str) -> FormatSender:
    path, _, content_type, status, scheme = FORMATS[name]
    key = ctx.tenant.ingest_key
    auth = {"x-api-key": key} if scheme == "x-api-key" else {"Authorization": f"{scheme} {key}"}
    headers = {"content-type": content_type, "x-dataset": "bench", **auth}
    return FormatSender(f"{ctx.server.url}{path}", status, headers)


def _batches(name: str, events: list[dict[str, Any]], per_body: int) -> list[Batch]:
    body = FORMATS[name][1]
    return [Batch(body(events[i : i + per_body]), []) for i in range(0, len(events), per_body)]


def run(ctx: BenchContext) -> None:
    total = 12_000 if ctx.quick else 48_000
    shapes = {"1,000 events": (1000, CLIENTS, total), "10 events": (10, TINY_CLIENTS, total // 8)}
    senders = {name: _sender(ctx, name) for name in FORMATS}
    warm = _events(400, seed=3)
    for name, sender in senders.items():
        run_concurrently(_batches(name, warm, 100), CLIENTS, sender.send)
    results: list[Measure] = []
    ratios: dict[tuple[str, str], float] = {}
    try:
        for shape, (per_body, clients, count) in shapes.items():
            events = _events(count)
            work = {name: _batches(name, events, per_body) for name in FORMATS}
            measures = {
                name: Measure(shape, name, count, sum(len(b.body) for b in batches) / MIB, [])
                for name, batches in work.items()
            }
            for repeat in range(ctx.repeats):
                order = list(FORMATS) if repeat % 2 == 0 else list(reversed(FORMATS))
                for name in order:
                    time.sleep(SETTLE_S)
                    seconds = run_concurrently(work[name], clients, senders[name].send)
                    measures[name].seconds.append(seconds)
            results += measures.values()
            base = measures["events"].events_per_s
            for name in FORMATS:
                ratios[(shape, name)] = measures[name].events_per_s / base
            ctx.log(f"  {shape}: {len(work['events'])} requests per path, {clients} clients")
    finally:
        for sender in senders.values():
            sender.close()
    print()
    print_table(results)
    print()
    for (shape, name), ratio in ratios.items():
        if name != "events":
            print(f"ratio {name}/events, {shape} bodies: {ratio:.2f}  (target >= {TARGET})")
    print()
    cpu = pipeline_cpu(rounds=10 if ctx.quick else 30)
    for name, micros in cpu.items():
        print(f"pipeline CPU an event, 1,000-event bodies, {name}: {micros:.1f} µs "
              f"({micros / cpu['events']:.2f} of the Events API's)")  # fmt: skip


class _Discard:
    """A row sink that keeps nothing: the pipeline's own CPU, without the engine's."""

    def insert(self, tenant: Tenant, rows: Sequence[EventRow]) -> None:
        pass


def pipeline_cpu(per_body: int = 1000, rounds: int = 30) -> dict[str, float]:
    """µs of CPU an event of each format's pipeline, medians of ``rounds`` in turns."""
    sink, tenant, bounds = _Discard(), Tenant("bench", "bench"), limits()
    events = _events(per_body)
    bodies = {name: FORMATS[name][1](events) for name in FORMATS}
    steps: dict[str, Callable[[bytes], object]] = {
        "events": lambda b: ingest_body(sink, Origin(tenant, "bench"), b, bounds),
        "es_bulk": lambda b: ingest_bulk(sink, tenant, True, b, "bench", bounds),
        "loki": lambda b: ingest_push(sink, tenant, True, b, False, "bench", bounds, 6 * MIB),
        "loki_pb": lambda b: ingest_push(sink, tenant, True, b, True, "bench", bounds, 6 * MIB),
        "hec": lambda b: ingest_events(sink, tenant, True, b, "bench", bounds),
    }
    spent: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            started = time.thread_time()
            step(bodies[name])
            spent[name].append(time.thread_time() - started)
    return {name: statistics.median(s) * 1e6 / per_body for name, s in spent.items()}
