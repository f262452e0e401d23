"""A regex looked up in an index's dictionary (query.needle): whatever the tokens of
other tenants' events, it answers as reading every event does, and what a run of it
reads does not tell one tenant whether another's events hold a token it matches."""

from __future__ import annotations

import random
import string
import uuid
from itertools import islice, product
from typing import Any

import pytest

from limelight.query.needle import Dictionaries, needle_sql
from limelight.query.plans import Timeframe
from limelight.query.scope import Scope
from limelight.query.spec import Needle
from limelight.query.sql import Params
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.tenant import Tenant
from tests import query_reference as ref
from tests.integration.test_needle_phrases_chdb import needle_count

NOW_MS = 1_795_000_000_000
FRAME = Timeframe(NOW_MS - 3_600_000, NOW_MS + 1)
MINE = Tenant("ws_regex_a", "env_regex_a")
THEIRS = Tenant("ws_regex_b", "env_regex_b")


def _store(tmp_path_factory: pytest.TempPathFactory) -> ChdbEventStore:
    shared = ref.shared_chdb_store(tmp_path_factory)
    store = ChdbEventStore(shared.path, database=f"regex_{uuid.uuid4().hex[:8]}")
    store.start()
    return store


def _write(store: ChdbEventStore, tenant: Tenant, messages: list[str]) -> None:
    for i in range(0, len(messages), 5000):
        events = [
            {"message": m, "timestamp": NOW_MS - 1000 - i - j}
            for j, m in enumerate(messages[i : i + 5000])
        ]
        ref.store_events(store, tenant, "ds", events)


def _run(
    store: ChdbEventStore, tenant: Tenant, needle: dict[str, Any], dictionaries: bool = True
) -> tuple[int, int, int]:
    return needle_count(store, tenant, FRAME, needle, dictionaries)


def test_a_regex_finding_megabytes_of_tokens_answers_as_reading_every_event(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Another tenant's 1,000 stretches of 1,200 letters are tokens the regex finds, 1.2
    MB of them, which the engine once refused to take as the constant a lookup needs;
    and 800 words of 25 KB, which are not taken whole (whose like, 250 KB each, held
    every regex of the day past its memory). Mine
    include a word of 6,000 letters, longer than a dictionary's tokens are taken."""
    store = _store(tmp_path_factory)
    rnd = random.Random(5)

    def letters(n: int) -> str:
        return "".join(rnd.choices(string.ascii_lowercase, k=n))

    _write(store, THEIRS, ["zz" + letters(1200) for _ in range(1000)])
    _write(store, THEIRS, ["zz" + letters(25_000) for _ in range(800)])
    _write(store, MINE, ["hello zzabc", "nothing here", "long " + "zz" + letters(6000) + " end"])
    store.command(f"OPTIMIZE TABLE {store.table} FINAL")
    needle = {"value": "zz[a-z]+", "isRegex": True}
    assert _run(store, MINE, needle)[0] == _run(store, MINE, needle, dictionaries=False)[0] == 2
    assert _run(store, THEIRS, needle)[0] == 1800
    cased = {"value": "end|zz[a-z]+", "isRegex": True, "matchCase": True}
    assert _run(store, MINE, cased)[0] == 2
    store.close()


def test_what_a_run_reads_does_not_depend_on_another_tenants_tokens(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """My 10,000 tokens of "se" and four letters, and another tenant's one token that my
    regex finds ("secretword") or does not ("xecretword"): the dictionary holds as many
    tokens either way, and my run reads as much. (Counting the tokens found and reading
    raw past 10,000 told the two apart.)"""
    mine = ["se" + "".join(t) for t in islice(product(string.ascii_lowercase, repeat=4), 10_000)]
    runs = []
    for theirs in ("the secretword here", "the xecretword here"):
        store = _store(tmp_path_factory)
        _write(store, MINE, mine)
        _write(store, THEIRS, [theirs])
        store.command(f"OPTIMIZE TABLE {store.table} FINAL")
        runs.append(_run(store, MINE, REGEX))
        store.close()
    # Events found, dictionary rows and bytes of the index and columns read: the same.
    assert runs[0] == runs[1] and runs[0][0] == 10_000
    # Looked up in the dictionary (reading the events' text reads the same either way).
    reads = Dictionaries(Scope(MINE.workspace_id, MINE.environment_id), "db.events", FRAME)
    assert "mergeTreeTextIndex(db, events, raw_phrases)" in needle_sql(
        Needle(**REGEX), Params(), reads
    )


REGEX: dict[str, Any] = {"value": "se[a-z]+", "isRegex": True}
