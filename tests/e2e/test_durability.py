"""A 202 (or 400) means the accepted events are on disk: SIGKILL cannot take them back."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests import web
from tests.support import CLI, LiveServer, Tenant, launch

PER_BATCH = 200
CONCURRENT_ACKS = 16  # acknowledgements from the concurrent clients before the kill
# Small batches, as serverless functions send them: through the write-ahead log.
SMALL, SMALL_BATCHES = 20, 120


def batch(name: str, size: int = PER_BATCH) -> list[object]:
    return [{"batch": name, "i": i, "message": "x" * 200} for i in range(size)]


def stored_counts(server: LiveServer, tenant: Tenant) -> tuple[Counter[tuple[str, int]], int]:
    events = server.read(tenant.admin_key, "durable", limit=10_000)
    ids = [e["_id"] for e in events]
    assert len(ids) == len(set(ids)), "an event id appears twice"
    return Counter((e["batch"], e["i"]) for e in events if "batch" in e), len(events)


@pytest.mark.slow
def test_acknowledged_events_survive_sigkill_exactly_once(tmp_path: Path) -> None:
    server = launch(tmp_path / "data")
    acked: list[str] = []
    sent: list[str] = []
    lock = threading.Lock()
    try:
        tenant = server.new_tenant()
        # One after the other, including a partly invalid batch (400 also acknowledges).
        for n in range(4):
            r = server.send(tenant.ingest_key, "durable", batch(f"seq{n}"))
            assert r.status_code == 202
            acked.append(f"seq{n}")
        r = server.send(tenant.ingest_key, "durable", [*batch("partial"), "not an object"])
        assert r.status_code == 400
        acked.append("partial")

        # Then several clients at once; the kill lands while some are still in flight.
        stop = threading.Event()
        enough = threading.Event()

        def client(c: int) -> None:
            with web.Client(timeout=30) as http:
                for n in range(1000):
                    if stop.is_set():
                        return
                    name = f"c{c}-{n}"
                    with lock:
                        sent.append(name)
                    try:
                        r = http.post(
                            f"{server.events_url}/v1/durable",
                            json=batch(name),
                            headers={"x-api-key": tenant.ingest_key},
                        )
                    except httpx.HTTPError:
                        return  # the server is gone
                    if r.status_code == 202:
                        with lock:
                            acked.append(name)
                            if sum(a.startswith("c") for a in acked) >= CONCURRENT_ACKS:
                                enough.set()

        clients = [threading.Thread(target=client, args=(c,)) for c in range(4)]
        for t in clients:
            t.start()
        assert enough.wait(120), "the clients made no progress"
        server.kill()  # SIGKILL, right after the 16th concurrent acknowledgement
        stop.set()
        for t in clients:
            t.join(60)
        with lock:
            acknowledged = list(acked)
            attempted = list(sent)
    finally:
        server.stop()

    server.start()  # the same data dir and port
    try:
        counts, total = stored_counts(server, tenant)
    finally:
        server.stop()

    for name in acknowledged:
        for i in range(PER_BATCH):
            assert counts[(name, i)] == 1, f"event {i} of acknowledged batch {name}"
    # Batches in flight at the kill are stored whole or not at all, never twice.
    for name in set(attempted) - set(acknowledged):
        seen = {counts[(name, i)] for i in range(PER_BATCH)}
        assert seen in ({0}, {1}), f"batch {name} was stored in part: {seen}"
    assert all(c == 1 for c in counts.values())
    assert total >= len(acknowledged) * PER_BATCH


def segments_held(server: LiveServer) -> float:
    """The write-ahead log's segments holding events not yet in the engine, as the server
    counts them."""
    text = web.get(f"{server.url}/metrics", timeout=30).text
    found = re.search(r"^limelight_ingest_buffer_segments (\S+)$", text, re.MULTILINE)
    assert found, "the server does not report its write-ahead log segments"
    return float(found.group(1))


def logged_segments(data_dir: Path) -> list[Path]:
    """The write-ahead log's segments that hold records (the spare one is empty)."""
    return [p for p in (data_dir / "wal").glob("*.wal") if p.stat().st_size > 0]


@pytest.mark.slow
def test_a_kill_during_the_background_insert_and_during_recovery_loses_nothing(
    tmp_path: Path,
) -> None:
    """Small batches are acknowledged from the write-ahead log and written to the engine
    in the background: a SIGKILL while a segment is being written, then another while the
    next start writes back what the log holds, leaves every acknowledged event stored
    exactly once."""
    data = tmp_path / "data"
    server = launch(data)
    acked: list[str] = []
    sent: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()
    try:
        tenant = server.new_tenant()

        def client(c: int) -> None:
            with web.Client(timeout=30) as http:
                for n in range(SMALL_BATCHES):  # within what one read returns
                    if stop.is_set():
                        return
                    name = f"k{c}-{n}"
                    with lock:
                        sent.append(name)
                    try:
                        r = http.post(
                            f"{server.events_url}/v1/durable",
                            json=batch(name, SMALL),
                            headers={"x-api-key": tenant.ingest_key},
                        )
                    except httpx.HTTPError:
                        return
                    if r.status_code == 202:
                        with lock:
                            acked.append(name)

        def read() -> None:
            with contextlib.suppress(httpx.HTTPError):
                server.read(tenant.admin_key, "durable", limit=1)

        clients = [threading.Thread(target=client, args=(c,)) for c in range(4)]
        for t in clients:
            t.start()
        deadline = time.monotonic() + 120
        while len(acked) < CONCURRENT_ACKS:
            assert time.monotonic() < deadline, "the clients' batches were not acknowledged"
            time.sleep(0.005)
        # A read closes the open segment and waits for it to be in the engine, while the
        # clients still send: the background insert starts now, however fast the log's
        # syncs let them send (on a tmpfs they were all sent before the segment's age
        # closed it, and one segment never met another).
        reader = threading.Thread(target=read)
        reader.start()
        # Two segments hold records, as the server counts them: the older one is closed
        # and being written to the engine (a segment is removed once all of it is
        # there), the newer takes appends.
        while segments_held(server) < 2:
            assert time.monotonic() < deadline, "no background insert was seen under way"
            time.sleep(0.005)
        server.kill()
        stop.set()
        for t in [*clients, reader]:
            t.join(60)
        with lock:
            acknowledged = list(acked)
            attempted = list(sent)
    finally:
        stop.set()
        server.stop()
    assert logged_segments(data), "the kill left nothing in the log to write back"

    # The next start writes the log back in the background; kill it as it begins.
    with server.log_path.open("ab") as log:
        proc = subprocess.Popen(
            [*CLI, "serve"], env=server.env, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 60
        while "left in the write-ahead log" not in server.log_path.read_text():
            assert proc.poll() is None, server.log_path.read_text()
            assert time.monotonic() < deadline, "the log was not written back"
            time.sleep(0.002)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()

    server.start()
    try:
        counts, total = stored_counts(server, tenant)
    finally:
        server.stop()
    assert logged_segments(data) == []
    for name in acknowledged:
        for i in range(SMALL):
            assert counts[(name, i)] == 1, f"event {i} of acknowledged batch {name}"
    for name in set(attempted) - set(acknowledged):
        seen = {counts[(name, i)] for i in range(SMALL)}
        assert seen in ({0}, {1}), f"batch {name} was stored in part: {seen}"
    assert all(c == 1 for c in counts.values())
    assert total >= len(acknowledged) * SMALL
