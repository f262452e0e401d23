"""Small batches sharing one INSERT (ingest.group_commit), on both transports: each
tenant's batches go together and come back exactly once, a batch the engine refuses
fails alone, and a group whose fate is unknown fails whole rather than go twice."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

from limelight.errors import StoreError
from limelight.ingest.group_commit import ALONE_ROWS, GroupCommit
from limelight.store.events.base import EventRow, EventStore
from limelight.store.events.unscoped import unscoped
from limelight.tenant import Tenant
from limelight.times import DAY_MS
from tests.held_store import PassingStore

NOW_MS = 1_790_000_000_000
A = Tenant("ws_group_a", "env")
B = Tenant("ws_group_b", "env")


class Held(PassingStore):
    """The real store, with a count of its INSERTs and a gate the first one waits at,
    so that batches queue behind it as they would behind a busy engine; ``failures``
    maps an INSERT's number to what it raises instead of writing."""

    def __init__(self, store: EventStore, failures: dict[int, BaseException] | None = None) -> None:
        super().__init__(store)
        self.gate = threading.Event()
        self.groups: list[int] = []  # batches per INSERT (the tags of their rows' ids)
        self.entered = threading.Event()
        self.failures = failures or {}

    def insert(self, tenant: Tenant, rows: Sequence[EventRow]) -> None:
        self.groups.append(len({r.id.rsplit("-", 1)[0] for r in rows}))
        self.entered.set()
        self.gate.wait(10)
        failure = self.failures.get(len(self.groups))
        if failure is not None:
            raise failure
        self.store.insert(tenant, rows)


def _rows(tag: str, n: int, at_ms: int = NOW_MS, raw: bytes | None = None) -> list[EventRow]:
    """``n`` rows; ``raw`` is every row's text, else a small event naming the row."""
    return [
        EventRow(
            dataset="group",
            service="svc",
            namespace="ns",
            timestamp_ms=at_ms + i,
            id=f"{tag}-{i}",
            raw=raw if raw is not None else b'{"tag": "%s", "i": %d}' % (tag.encode(), i),
        )
        for i in range(n)
    ]


def _ids(store: EventStore, tenant: Tenant, dataset: str = "group") -> list[str]:
    result = unscoped(store).query(
        f"SELECT id FROM {store.table} WHERE workspace_id = {{w:String}}"
        " AND environment_id = {e:String} AND dataset = {d:String} ORDER BY id",
        {"w": tenant.workspace_id, "e": tenant.environment_id, "d": dataset},
        ["id"],
    )
    return [r["id"] for r in result.rows]


def _send_all(sink: Any, batches: list[tuple[Tenant, list[EventRow]]]) -> list[BaseException]:
    errors: list[BaseException] = []

    def send(tenant: Tenant, rows: list[EventRow]) -> None:
        try:
            sink.insert(tenant, rows)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=send, args=b) for b in batches]
    for t in threads:
        t.start()
    return errors if _join(threads) else [TimeoutError("a batch never returned")]


def _join(threads: list[threading.Thread]) -> bool:
    for t in threads:
        t.join(20)
    return not any(t.is_alive() for t in threads)


def _start_blocked(held: Held, group: GroupCommit, tenant: Tenant, tag: str) -> threading.Thread:
    """A first batch that takes the only slot and holds it at the gate."""
    first = threading.Thread(target=group.insert, args=(tenant, _rows(tag, 2)))
    first.start()
    assert held.entered.wait(10)
    return first


def _wait_queued(group: GroupCommit, count: int) -> None:
    deadline = time.monotonic() + 10
    while len(group._waiting) < count:  # noqa: SLF001 - the test waits for the queue to fill
        assert time.monotonic() < deadline, "the batches never queued"
        time.sleep(0.005)


def _wait_inserts(held: Held, count: int, failure: str) -> None:
    """Until ``count`` INSERTs have reached the store (held at its gate or not)."""
    deadline = time.monotonic() + 10
    while len(held.groups) < count:
        assert time.monotonic() < deadline, failure
        time.sleep(0.005)


def test_batches_waiting_for_a_slot_go_in_one_insert_per_tenant_and_each_reads_its_own(
    store: EventStore,
) -> None:
    held = Held(store)
    group = GroupCommit(held, slots=1)
    batches = [
        (A, _rows(f"a-{i:02d}", 3)) if i % 2 else (B, _rows(f"b-{i:02d}", 3)) for i in range(20)
    ]
    assert _queue_behind_first(held, group, A, batches) == []
    # The first INSERT held the first batch; the 20 that waited went in one per tenant.
    assert sorted(held.groups) == [1, 10, 10]
    expect_a = sorted(["first-0", "first-1"] + [r.id for t, rs in batches if t == A for r in rs])
    expect_b = sorted(r.id for t, rs in batches if t == B for r in rs)
    assert _ids(store, A) == expect_a
    assert _ids(store, B) == expect_b
    raws = unscoped(store).query(
        f"SELECT raw FROM {store.table} WHERE workspace_id = {{w:String}} AND dataset = 'group'",
        {"w": B.workspace_id},
        ["raw"],
    )
    assert all(b'"tag": "b-' in r["raw"].encode() for r in raws.rows)


def test_a_tenants_batches_wait_for_its_insert_in_flight_while_others_take_the_free_slot(
    store: EventStore,
) -> None:
    # Two slots: a's first INSERT holds one. Its next batches do not take the other (two
    # INSERTs of one tenant would halve its groups); they wait and go together after it,
    # while b's batch, arriving last, is written at once in the free slot.
    a, b = Tenant("ws_group_flight_a", "env"), Tenant("ws_group_flight_b", "env")
    held = Held(store)
    group = GroupCommit(held, slots=2)
    first = _start_blocked(held, group, a, "first")
    later = [(a, _rows(f"later-{i}", 2)) for i in range(5)]
    results: list[list[BaseException]] = []
    sender = threading.Thread(target=lambda: results.append(_send_all(group, later)))
    sender.start()
    _wait_queued(group, 5)
    other = threading.Thread(target=group.insert, args=(b, _rows("other", 3)))
    other.start()
    _wait_inserts(held, 2, "b's batch never took the free slot")
    # b's INSERT started beside a's first, and every later batch of a still waits.
    assert held.groups == [1, 1]
    assert len(group._waiting) == 5  # noqa: SLF001 - what waits is the behaviour under test
    held.gate.set()
    assert _join([first, sender, other])
    assert results == [[]]
    assert held.groups == [1, 1, 5]
    assert _ids(store, a) == sorted(["first-0", "first-1"] + [r.id for _, rs in later for r in rs])
    assert _ids(store, b) == ["other-0", "other-1", "other-2"]


def test_a_tenants_waiting_batches_that_fill_a_group_take_the_free_slot_beside_its_insert(
    store: EventStore,
) -> None:
    # Waiting buys a larger group; once the waiting batches make a group as large as a
    # batch that goes alone, they go at once, as such a batch would.
    tenant = Tenant("ws_group_full", "env")
    held = Held(store)
    group = GroupCommit(held, slots=2)
    first = _start_blocked(held, group, tenant, "first")
    per = ALONE_ROWS * 2 // 5  # two wait; the third makes a group over ALONE_ROWS
    results: list[list[BaseException]] = []
    batches = [(tenant, _rows(f"full-{i}", per)) for i in range(3)]
    senders = []
    for i, batch in enumerate(batches):
        senders.append(
            threading.Thread(target=lambda b=batch: results.append(_send_all(group, [b])))
        )
        senders[-1].start()
        if i < 2:
            _wait_queued(group, i + 1)
    _wait_inserts(held, 2, "the full group never took the free slot")
    assert held.groups == [1, 3]  # beside the first INSERT, still held at the gate
    held.gate.set()
    assert _join([first, *senders])
    assert results == [[], [], []]
    assert len(_ids(store, tenant)) == 2 + 3 * per


def test_a_batch_the_engine_refuses_fails_alone_and_the_others_are_stored_once(
    store: EventStore,
) -> None:
    tenant = Tenant("ws_group_bad", "env")
    held = Held(store)
    group = GroupCommit(held, slots=1)
    good = [(tenant, _rows(f"good-{i}", 2)) for i in range(4)]
    bad = (tenant, _rows("bad", 1, raw=b'{"cut": '))  # not JSON: the engine refuses `data`
    errors = _queue_behind_first(held, group, tenant, [*good, bad])
    assert len(errors) == 1 and isinstance(errors[0], StoreError)
    # The group failed whole, then each batch went alone.
    assert held.groups == [1, 5, 1, 1, 1, 1, 1]
    expected = sorted(["first-0", "first-1"] + [r.id for _, rs in good for r in rs])
    assert _ids(store, tenant) == expected


def test_large_batches_and_batches_over_two_days_go_alone(store: EventStore) -> None:
    tenant = Tenant("ws_group_alone", "env")
    held = Held(store)
    held.gate.set()
    group = GroupCommit(held, slots=1)
    two_days = _rows("span", 1, at_ms=NOW_MS - DAY_MS) + _rows("span", 2)[1:]
    group.insert(tenant, two_days)
    group.insert(tenant, _rows("big", ALONE_ROWS))
    assert held.groups == [1, 1]
    assert len(_ids(store, tenant)) == 2 + ALONE_ROWS


def test_batches_of_other_days_wait_for_a_group_of_their_own(store: EventStore) -> None:
    tenant = Tenant("ws_group_days", "env")
    held = Held(store)
    group = GroupCommit(held, slots=1)
    today = [(tenant, _rows(f"today-{i}", 2)) for i in range(3)]
    yesterday = [(tenant, _rows(f"yday-{i}", 2, at_ms=NOW_MS - 2 * DAY_MS)) for i in range(2)]
    assert _queue_behind_first(held, group, tenant, [*today, *yesterday]) == []
    assert sorted(held.groups) == [1, 2, 3]
    assert len(_ids(store, tenant)) == 2 + 6 + 4


@pytest.mark.parametrize("slots", [1, 2])
def test_many_concurrent_small_batches_are_all_stored_exactly_once(
    store: EventStore, slots: int
) -> None:
    tenant = Tenant(f"ws_group_many_{slots}", "env")
    group = GroupCommit(store, slots=slots)
    batches = [(tenant, _rows(f"m{i:03d}", 5)) for i in range(64)]
    assert _send_all(group, batches) == []
    assert _ids(store, tenant) == sorted(r.id for _, rs in batches for r in rs)


def _queue_behind_first(
    held: Held, group: GroupCommit, tenant: Tenant, batches: list[tuple[Tenant, list[EventRow]]]
) -> list[BaseException]:
    """``tenant``'s first batch holds the slot while ``batches`` queue; then all go.
    The errors."""
    first = _start_blocked(held, group, tenant, "first")
    results: list[list[BaseException]] = []
    sender = threading.Thread(target=lambda: results.append(_send_all(group, batches)))
    sender.start()
    _wait_queued(group, len(batches))
    held.gate.set()
    assert _join([first, sender])
    [errors] = results
    return errors


def _send_telling(
    group: GroupCommit, tenant: Tenant, tag: str, told: dict[str, BaseException | None]
) -> None:
    """Two rows tagged ``tag``; ``told[tag]``: what the request was told (None: stored)."""
    try:
        group.insert(tenant, _rows(tag, 2))
        told[tag] = None
    except BaseException as exc:
        told[tag] = exc


def test_a_group_that_may_have_been_written_fails_whole_and_is_not_written_again(
    store: EventStore,
) -> None:
    # A timeout (or a full disk) says nothing of what the engine wrote: retrying each
    # batch could store it twice, so each request gets the error and its client retries.
    tenant = Tenant("ws_group_unknown", "env")
    held = Held(store, {2: StoreError("Timeout exceeded", 159)})
    group = GroupCommit(held, slots=1)
    batches = [(tenant, _rows(f"u{i}", 2)) for i in range(4)]
    errors = _queue_behind_first(held, group, tenant, batches)
    assert len(errors) == 4 and all(isinstance(e, StoreError) for e in errors)
    assert held.groups == [1, 4]
    assert _ids(store, tenant) == ["first-0", "first-1"]


def test_an_interrupt_while_retrying_fails_every_batch_not_yet_written(
    store: EventStore,
) -> None:
    tenant = Tenant("ws_group_interrupt", "env")
    refused = StoreError("Cannot parse JSON object here", 117)
    held = Held(store, {2: refused, 4: KeyboardInterrupt()})
    group = GroupCommit(held, slots=1)
    first = _start_blocked(held, group, tenant, "first")
    told: dict[str, BaseException | None] = {}
    threads = [
        threading.Thread(target=_send_telling, args=(group, tenant, f"i{i}", told))
        for i in range(4)
    ]
    for t in threads:
        t.start()
    _wait_queued(group, 4)
    held.gate.set()
    assert _join([first, *threads])
    # The group was refused, one batch alone went in, the next was interrupted.
    assert held.groups == [1, 4, 1, 1]
    written = {i.rsplit("-", 1)[0] for i in _ids(store, tenant)} - {"first"}
    assert len(written) == 1
    # No request whose rows were not written is told they were (the thread that was
    # interrupted may be the one whose rows went in: it is interrupted all the same).
    told_ok = {tag for tag, error in told.items() if error is None}
    assert told_ok <= written
    assert all(told[tag] is not None for tag in set(told) - written)


def test_a_group_stops_at_its_size_in_bytes(store: EventStore) -> None:
    tenant = Tenant("ws_group_bytes", "env")
    held = Held(store)
    group = GroupCommit(held, slots=1)
    text = b'{"pad": "' + b"x" * 19_000 + b'"}'
    batches = [(tenant, _rows(f"b{i}", 100, raw=text)) for i in range(10)]  # 1.9 MB each
    assert _queue_behind_first(held, group, tenant, batches) == []
    # 16 MiB hold eight of them; the other two wait for the next INSERT.
    assert held.groups == [1, 8, 2]
    assert len(_ids(store, tenant)) == 2 + 1000


def test_a_request_interrupted_while_writing_anothers_group_is_never_written_later(
    store: EventStore,
) -> None:
    # Two tenants' batches wait; whichever thread leads writes the first tenant's group,
    # and that write is interrupted. A request that failed must not be written by
    # whoever writes next (its client retries it), and one told success must be stored.
    one, two = Tenant("ws_group_lead_1", "env"), Tenant("ws_group_lead_2", "env")
    held = Held(store, {2: KeyboardInterrupt()})
    group = GroupCommit(held, slots=1)
    first = _start_blocked(held, group, one, "first")
    told: dict[str, BaseException | None] = {}

    x = threading.Thread(target=_send_telling, args=(group, one, "x", told))
    x.start()
    _wait_queued(group, 1)
    y = threading.Thread(target=_send_telling, args=(group, two, "y", told))
    y.start()
    _wait_queued(group, 2)
    held.gate.set()
    assert _join([first, x, y])
    later = threading.Thread(target=_send_telling, args=(group, two, "z", told))
    later.start()
    assert _join([later])
    stored = {i.rsplit("-", 1)[0] for t in (one, two) for i in _ids(store, t)} - {"first"}
    assert told["x"] is not None and told["z"] is None
    assert stored == {tag for tag, error in told.items() if error is None}
