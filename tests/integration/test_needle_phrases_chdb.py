"""Needles beyond letters (phrases, snake_case, dotted names, paths, ids, numbers with
their neighbours, text across the JSON structure, one or two characters, matchCase,
regexes): the same answers as reading every event, before the parts merge, once they
have, and while the phrases, numbers, cased, cased numbers and digit runs indexes (DDL
0015, 0016, 0019, 0023, 0024's and 0025's with three digits, which replace 0016's and
0023's, and 0026) are built for events written before them; a needle the indexes answer
(no digit, quote or character past ASCII; or quotes, and at most three digits at the
end after punctuation; matchCase, of letters and `` ._-/:,=()``, or as the numbers
index's with case; three digits alone) never reads the events' text once they are
built."""

from __future__ import annotations

import random
import re
import time
import uuid
from itertools import product
from typing import Any

import pytest

from limelight.query.compile import RunOptions, compile_run
from limelight.query.needle import CASED, CASED_NUMBERS, DIGIT_RUNS, NUMBERS, PHRASES, needle_sql
from limelight.query.plans import CompiledQuery, Timeframe
from limelight.query.spec import Needle, validate_fields
from limelight.query.sql import Params
from limelight.store.events import ddl
from limelight.store.events.chdb_store import ChdbEventStore
from limelight.tenant import Tenant
from tests import query_reference as ref

NOW_MS = 1_795_000_000_000
SPAN_MS = 3_600_000
TENANT = Tenant("ws_phrases", "env_phrases")
FRAME = Timeframe(NOW_MS - SPAN_MS, NOW_MS + 1)

MESSAGES = [
    "payment failed: card_declined by issuer (order 12345)",
    "Payment FAILED twice, card_declined_again",
    "payment  failed with two spaces",
    "payment 7 failed with a digit between",
    "reorder 12 items; order 1 2 apart",
    "GET /api/cart/items completed with 200",
    "GET /api/carts completed with 404",
    "ERR-42 raised, then err-421 and xERR-42",
    "50% off a_b, not axb, path c:\\temp\\x",
    'said "hello there" twice',
    "quasär ünïcode text",
    "\u212aelvin degrees",
    "upstream timeout after 30s",
    "Timeout while reading",
    "NullPointerException at OrderService.process(), user_id=7 [retry]",
]
EXTRA: list[dict[str, Any]] = [
    {"user.id": 5, "message": "dotted key"},
    {"user": {"id": 6}, "message": "nested key"},
    {"a": 1, "b": {"a": "x"}},
    {"tags": ["card_declined", "user.id"], "n": 12345},
]

# The exact ones are answered from the phrases index alone once it is built.
EXACT = [
    "payment failed",
    "PAYMENT failed",
    "card_declined",
    "card_declined_again",
    "issuer (order",
    "user.id",
    "/api/cart",
    "/api/cart/",
    "a_b",
    "% off a_",
    "c:\\\\temp",
    ", then err-",
    " raised, ",
    "ed: card_de",
    # quotes and numbers after punctuation: the numbers index (DDL 0024)
    "order 12",
    "order 123",
    "err-421",
    "with 200",
    "with 404",
    '"n":123',
    ", then err-42",
    "order 1",
    "ERR-42",
    "(order 12",
    '":"',
    '{"a',
    '"a":1',
    '"a":12',
    '"message":"said ',
    '"message":"payment failed',
    '"user.id":5',
    # a key's start: the numbers index cuts before each `,"` (DDL 0027)
    ',"message":"dotted',
    '"message":"dotted key"',
    "c:\\\\temp\\\\x",
    # three digits anywhere in a number: the digit runs index (DDL 0026)
    "123",
    "345",
    "421",
    "200",
]
READ = [
    "payment  failed",
    "12345",
    "50% off",
    "(order 12345)",
    "order 1234",
    "err-4210",
    "2, ",
    "er 12",
    "r12",
    '"n": 12345',
    '"n":12345}',
    # across a cut of the numbers index (`,"` inside, a `,` at the end): read
    '":"dotted key","',
    'dotted key",',
    '"id":5,',
    '":5,"',
    '\\"hello',
    '"hello there"',
    "quasär",
    "ünïcode text",
    "_",
    "a",
    ":",
    "%",
    "ab",
    "a_",
    "xy",
]
# matchCase: answered from the cased index alone once it is built.
CASED_EXACT = [
    "Payment",
    "payment failed",
    "Payment FAILED",
    "PAYMENT failed",
    "FAILED twice, card_declined_again",
    "Timeout",
    "timeout",
    "NullPointerException",
    "Exception at OrderService.process(), user_id=",
    "OrderService.process()",
    "user.id",
    "GET /api/cart",
    "a_b, not",
    "Pa",
    "ce.pr",
]
# matchCase with quotes, numbers after punctuation or other punctuation: the cased
# numbers index (DDL 0025).
CASED_NUMBERS_EXACT = [
    "ERR-42",
    "err-421",
    "then err-421",
    "GET /api/carts completed with 404",
    '"n":123',
    "err-42",
    "ERR-4",
    "xERR-42",
    ", then err-42",
    '"A":1',
    '"message":"Payment',
    '"message":"payment',
    "[retry]",
    "(order 12",
    "Exception at OrderService.process(), user_id=7",
    ": card_declined by issuer (order 12",
]
CASED_READ = [
    "err-4210",
    "Err-421",
    "(order 12345)",
    "Payment FAILED twice, card",
    "user_id=7 [retry]",
    "P",
    "quasär",
    "\u212aelvin",
    "Kelvin",
]
REGEXES = [
    "card_dec[a-z]+ed",
    r"payment\s+failed",
    r"issuer \(order \d+\)",
    "PAYMENT failed",
    "order (12|34)",
    "timeout|declined",
    "kelvin",
    r"c:\\\\temp",
    "a_b|x{2}",
    "^\\{",
    "(?i)card_DECLINED",
    "card_?declined",
    "/api/carts?/",
    "order 12[0-9]+\\)",
    '"a":1[0-9]*,',
    # Each match inside one token of the phrases index (the cased one with matchCase):
    # the tokens the dictionary finds for them are looked up (query.needle).
    "up[a-z]+ time(out|d)",
    "pay[a-z]+ +fail",
    "[a-z]+_again",
    "ünïcode [a-z]+",
    "quas.r|unicode",
    "null[a-z]+ion at [a-z]+service",
    "/api/carts?/",
    "x{2,}",
]
CASED_REGEX_EXACT = [
    "card_dec[a-z]+ed",
    "PAYMENT failed",
    "Null[A-Za-z]+Exception at",
    "Payment [A-Z]+",
    "[A-Z][a-z]+out",
]
# What the dictionaries answer: two characters of literal text or more in each
# alternative (`a_b|x{2}` and `x{2,}` read raw).
REGEX_EXACT = [
    "card_dec[a-z]+ed",
    "timeout|declined",
    "PAYMENT failed",
    "kelvin",
    "card_?declined",
    "/api/carts?/",
    "up[a-z]+ time(out|d)",
    "pay[a-z]+ +fail",
    "[a-z]+_again",
    "ünïcode [a-z]+",
    "null[a-z]+ion at [a-z]+service",
]


# A regex that is a few needles (query.regex_texts), each answered by an index: their
# LIKEs joined by OR, three digits by one lookup of their grams.
REGEX_NEEDLES = [
    "ERR-[0-9]+",
    "order 1[0-9]*",
    r"\(order \d",
    "with [24]0[04]",
    "12[0-9]",
    r"4\d{2}",
    "card_declined",
    r"c:\\\\temp\\\\x",
    "a_b",
]
CASED_REGEX_NEEDLES = ["ERR-[0-9]+", "then err-4[0-9]", "Payment", r"\[retry\]"]


def needles() -> list[dict[str, Any]]:
    plain = [{"value": v} for v in EXACT + READ]
    cased = [
        {"value": v, "matchCase": True} for v in CASED_EXACT + CASED_NUMBERS_EXACT + CASED_READ
    ]
    regex = [{"value": v, "isRegex": True} for v in REGEXES + REGEX_NEEDLES]
    regex_cased = [
        {"value": v, "isRegex": True, "matchCase": True}
        for v in [*REGEXES[:4], *CASED_REGEX_EXACT[2:], *CASED_REGEX_NEEDLES]
    ]
    return plain + cased + regex + regex_cased


def events() -> list[dict[str, Any]]:
    out = ref.generate_events(600, seed=9, now_ms=NOW_MS, span_ms=SPAN_MS)
    for i, message in enumerate(MESSAGES + [str(e) for e in EXTRA]):
        for copy in range(3):
            at = NOW_MS - 1000 * (i * 3 + copy + 1)
            event = EXTRA[i - len(MESSAGES)] if i >= len(MESSAGES) else {"message": message}
            out.insert(50 * copy + i, {**event, "timestamp": at})
    return out


def count(
    store: ChdbEventStore, needle: dict[str, Any], dictionaries: bool = True
) -> tuple[int, int]:
    """(events holding the needle, bytes the engine read to count them)."""
    found, _, read = needle_count(store, TENANT, FRAME, needle, dictionaries)
    return found, read


def _counting(
    table: str, tenant: Tenant, frame: Timeframe, needle: dict[str, Any], dictionaries: bool
) -> CompiledQuery:
    plan = compile_run(
        validate_fields({"calculations": [{"operator": "COUNT"}], "needle": needle}),
        workspace_id=tenant.workspace_id,
        environment_id=tenant.environment_id,
        table=table,
        timeframe=frame,
        options=RunOptions(),
        dictionaries=table if dictionaries else None,
    )
    return plan.statements.by_name()["aggregates"]


def needle_count(
    store: ChdbEventStore,
    tenant: Tenant,
    frame: Timeframe,
    needle: dict[str, Any],
    dictionaries: bool = True,
) -> tuple[int, int, int]:
    """(events holding the needle, rows and bytes the engine read to count them), as a
    run counts them (``dictionaries``: where the text indexes' dictionaries are read)."""
    statement = _counting(store.table, tenant, frame, needle, dictionaries)
    result = store.query(statement.sql, statement.params)
    [total] = [int(r["_count"]) for r in result.rows if r["_total"]]
    return total, result.rows_read, result.bytes_read


def truth(records: list[ref.Record], asked: list[dict[str, Any]] | None = None) -> dict[str, int]:
    return {
        repr(n): len(ref.select(records, {"needle": n}, FRAME.from_ms, FRAME.to_ms))
        for n in asked or needles()
    }


def counts(
    store: ChdbEventStore, asked: list[dict[str, Any]] | None = None, dictionaries: bool = True
) -> dict[str, tuple[int, int]]:
    return {repr(n): count(store, n, dictionaries) for n in asked or needles()}


def _store(tmp_path_factory: pytest.TempPathFactory, database: str) -> ChdbEventStore:
    shared = ref.shared_chdb_store(tmp_path_factory)
    return ChdbEventStore(shared.path, database=database)


def _write(store: ChdbEventStore) -> list[ref.Record]:
    batch = events()
    records: list[ref.Record] = []
    for i in range(0, len(batch), 250):
        records += ref.store_events(store, TENANT, "ds", batch[i : i + 250])
    return records


def test_needles_find_what_reading_every_event_finds_before_and_after_the_parts_merge(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    store = _store(tmp_path_factory, f"phrases_{uuid.uuid4().hex[:8]}")
    store.start()
    # A background merge of the inserts' parts would index them before the first count.
    store.command(f"SYSTEM STOP MERGES {store.table}")
    records = _write(store)
    expected = truth(records)
    assert [v for v in EXACT if expected[repr({"value": v})] == 0] == ['"a":12']
    assert expected[repr({"value": "payment failed"})] == 6  # 3 events of two messages
    assert expected[repr({"value": "user.id"})] == 6  # the dotted key and the tag
    assert expected[repr({"value": "order 12"})] == 6  # "order 12345" and "reorder 12"
    assert expected[repr({"value": '"a":12'})] == 0  # "a": 1 is a number of its own
    assert expected[repr({"value": '"message":"payment failed'})] == 6
    assert expected[repr({"value": "kelvin", "isRegex": True})] == 3  # the Kelvin sign
    assert expected[repr({"value": "Payment FAILED", "matchCase": True})] == 3
    assert expected[repr({"value": "payment failed", "matchCase": True})] == 3
    assert expected[repr({"value": "PAYMENT failed", "matchCase": True})] == 0
    assert [v for v in CASED_EXACT if expected[repr({"value": v, "matchCase": True})] == 0] == [
        "PAYMENT failed",
    ]
    regex_found = {v: expected[repr({"value": v, "isRegex": True})] for v in REGEX_NEEDLES}
    # ERR-42's message; "order 12345", "order 1 2" and "reorder 12"; 123 and 12345.
    assert (regex_found["ERR-[0-9]+"], regex_found["order 1[0-9]*"]) == (3, 6)
    assert regex_found["with [24]0[04]"] == 6 and regex_found[r"c:\\\\temp\\\\x"] == 3
    found = {v: expected[repr({"value": v, "matchCase": True})] for v in CASED_NUMBERS_EXACT}
    # One message's three events hold "ERR-42" (twice), and "err-42" only inside "err-421".
    assert (found["ERR-42"], found["err-42"], found["ERR-4"], found['"A":1']) == (3, 3, 3, 0)
    assert found['"message":"Payment'] == 3 and found['"message":"payment'] == 9

    unmerged = counts(store)
    assert {n: c for n, (c, _) in unmerged.items()} == expected
    store.command(f"SYSTEM START MERGES {store.table}")
    store.command(f"OPTIMIZE TABLE {store.table} FINAL")
    merged = counts(store)
    assert {n: c for n, (c, _) in merged.items()} == expected

    raw_bytes = sum(len(r.raw) for r in records)
    exact = {
        repr(n): merged[repr(n)][1]
        for n in [{"value": v} for v in EXACT]
        + [{"value": v, "matchCase": True} for v in CASED_EXACT + CASED_NUMBERS_EXACT]
        + [{"value": v, "isRegex": True} for v in REGEX_NEEDLES]
        + [{"value": v, "isRegex": True, "matchCase": True} for v in CASED_REGEX_NEEDLES]
    }
    assert {n: r for n, r in exact.items() if r >= raw_bytes / 10} == {}, raw_bytes
    # A regex reads the dictionary as well (its whole, a tenth of the text here; 4.8 MB
    # for 1M events), but not the events' text, which reading them all would read.
    regexes = {
        repr(n): merged[repr(n)][1]
        for n in [{"value": v, "isRegex": True} for v in REGEX_EXACT]
        + [{"value": v, "isRegex": True, "matchCase": True} for v in CASED_REGEX_EXACT]
    }
    assert {n: r for n, r in regexes.items() if r >= raw_bytes / 4} == {}, raw_bytes
    read = count(store, {"value": "card_dec[a-z]+ed", "isRegex": True}, dictionaries=False)
    assert read[1] > raw_bytes
    store.close()


def _index_built(store: ChdbEventStore, database: str) -> bool:
    found = store.query(
        "SELECT count() AS n FROM system.mutations WHERE database = {db:String} AND NOT is_done",
        {"db": database},
        ["n"],
    )
    return int(found.rows[0]["n"]) == 0


@pytest.mark.parametrize(
    ("version", "index", "needle"),
    [
        (15, PHRASES, {"value": "card_declined"}),
        (23, CASED_NUMBERS, {"value": ", then err-42", "matchCase": True}),
        (27, NUMBERS, {"value": "with 200"}),
        (25, CASED_NUMBERS, {"value": "then err-421", "matchCase": True}),
        (26, DIGIT_RUNS, {"value": "345"}),
        (15, PHRASES, {"value": "card_dec[a-z]+ed", "isRegex": True}),
        (19, CASED, {"value": "Payment [A-Z]+", "isRegex": True, "matchCase": True}),
    ],
)
def test_events_written_before_an_index_are_found_the_same_while_it_is_built(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    version: int,
    index: str,
    needle: dict[str, Any],
) -> None:
    # The needles of the needle's kind that the version's index answers or narrows (its
    # expression is in their statement); every needle is asked of unmerged and merged
    # events above. The others' statements are the same before the index and after.
    asked = [
        n
        for n in needles()
        if n.keys() == needle.keys() and index in _counting("db.events", TENANT, FRAME, n, True).sql
    ]
    assert needle in asked
    database = f"phrases_{uuid.uuid4().hex[:8]}"
    store = _store(tmp_path_factory, database)
    older = [(v, text) for v, text in ddl.ddl_files() if v < version]
    monkeypatch.setattr(ddl, "ddl_files", lambda: older)
    store.start()  # the schema of the version before the phrases index
    records = _write(store)
    store.command(f"OPTIMIZE TABLE {store.table} FINAL")
    expected = truth(records, asked)
    # The schema before may lack the index whose dictionary a regex reads.
    before = {n: c for n, (c, _) in counts(store, asked, dictionaries=False).items()}
    monkeypatch.undo()

    store.migrate()  # adds the index; the parts above get it in the background
    during = {n: c for n, (c, _) in counts(store, asked).items()}
    deadline = time.monotonic() + 60
    while not _index_built(store, database) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _index_built(store, database)
    after = counts(store, asked)
    assert before == during == {n: c for n, (c, _) in after.items()} == expected
    raw_bytes = sum(len(r.raw) for r in records)
    # A regex reads the index's dictionary too (see above).
    assert after[repr(needle)][1] < raw_bytes / (4 if needle.get("isRegex") else 10)
    store.close()


def test_a_start_does_not_wait_for_the_numbers_index_to_be_built_over_older_events(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded engine's sessions wait for a mutation by default: DDL 0024 to 0027
    ask not to, so a server upgraded over many events starts at once and indexes them
    after. From before 0025, 0027 drops the index 0025 is still building, which the
    engine refused while it was (a start failed so): 0027 stops that build first."""
    database = f"phrases_{uuid.uuid4().hex[:8]}"
    store = _store(tmp_path_factory, database)
    older = [(v, text) for v, text in ddl.ddl_files() if v < 25]
    monkeypatch.setattr(ddl, "ddl_files", lambda: older)
    store.start()
    store.command(
        f"INSERT INTO {store.table} (workspace_id, environment_id, dataset, timestamp, id, raw)"
        f" SELECT {{w:String}}, {{e:String}}, 'ds', fromUnixTimestamp64Milli({NOW_MS - 1000}"
        " - number), toString(number), concat('{\"status\":', toString(200 + number % 400),"
        " ',\"n\":', toString(number), '}') FROM numbers(400000)",
        {"w": TENANT.workspace_id, "e": TENANT.environment_id},
    )
    store.command(f"OPTIMIZE TABLE {store.table} FINAL")
    monkeypatch.undo()
    store.migrate()
    assert not _index_built(store, database)  # the 400,000 events are still being indexed
    needle = {"value": '"status":503'}
    during = count(store, needle)  # read from the events meanwhile, where not indexed
    deadline = time.monotonic() + 60
    while not _index_built(store, database) and time.monotonic() < deadline:
        time.sleep(0.1)
    after = count(store, needle)
    assert during[0] == after[0] == 1000 and after[1] < during[1] / 2
    store.close()


# The cased numbers index's codes are `0`, a lowercase letter, `1`; a kept digit is `9`
# and the digit. Text of those characters, of what is spelled (`"` is `0a1`, `-` is
# `0m1`), of a letter of each case, and of what is not spelled (`$`, `é`), so that every
# short needle of them meets codes from inside somewhere if it can. Both numbers indexes
# keep three digits after punctuation: needles of four characters end in three. A `,`
# too: the numbers index cuts before each `,"` of raw (between the message and the key
# after it; a `"` of the message is `\"` there), so needles meet its cuts.
_TRICKY = 'mZ-",019'
_TEXT = _TRICKY + " :$é"


def _random_texts(
    tmp_path_factory: pytest.TempPathFactory, rng: random.Random
) -> tuple[ChdbEventStore, list[ref.Record]]:
    """A store of 600 events whose messages are short random texts of ``_TEXT``, merged."""
    store = _store(tmp_path_factory, f"phrases_{uuid.uuid4().hex[:8]}")
    store.start()
    texts = ["".join(rng.choices(_TEXT, k=rng.randrange(1, 16))) for _ in range(600)]
    batch = [{"message": text, "timestamp": NOW_MS - 1000 - i} for i, text in enumerate(texts)]
    records = ref.store_events(store, TENANT, "ds", batch)
    store.command(f"OPTIMIZE TABLE {store.table} FINAL")
    return store, records


@pytest.mark.parametrize(
    ("index", "match_case", "answered"),
    [
        (CASED_NUMBERS, True, 80),
        (NUMBERS, False, 80),
        # Three of the characters are digits: 27 needles of three.
        (f"hasAllTokens({DIGIT_RUNS}", False, 27),
    ],
    ids=["cased", "numbers", "digits"],
)
def test_needles_an_index_answers_are_found_exactly_where_raw_holds_them(
    tmp_path_factory: pytest.TempPathFactory, index: str, match_case: bool, answered: int
) -> None:
    rng = random.Random(23)
    store, records = _random_texts(tmp_path_factory, rng)
    raws = [r.raw if match_case else r.raw.lower() for r in records]
    # Every needle of two or three of those characters the index answers, and some of four.
    values = [*product(_TRICKY, repeat=2), *product(_TRICKY, repeat=3)]
    values += rng.sample(list(product(_TRICKY, repeat=4)), 200)
    values += product('-"', "019", "019", "019")  # punctuation and three digits
    chosen = [
        value
        for value in map("".join, values)
        if needle_sql(Needle(value=value, matchCase=match_case), Params()).startswith(index)
    ]
    found, read = {}, {}
    for value in chosen:
        found[value], read[value] = count(store, {"value": value, "matchCase": match_case})
    folded = [v if match_case else v.lower() for v in chosen]
    assert found == {v: sum(f in raw for raw in raws) for v, f in zip(chosen, folded, strict=True)}
    assert len(chosen) >= answered and sum(1 for n in found.values() if n) > answered * 3 // 4
    # Three digits after punctuation, answered where they are.
    assert sum(1 for v, n in found.items() if n and v[-3:].isdigit()) > 5
    raw_bytes = sum(map(len, raws))
    assert {v: r for v, r in read.items() if r >= raw_bytes / 2} == {}, raw_bytes  # not raw
    # Needles across the numbers indexes' cut before a key's `,"` (`,"` after their first
    # character, or a `,` at their end), which neither answers: found where raw has them.
    across = rng.sample([v for v in map("".join, values) if ',"' in v[1:] or v[-1] == ","], 40)
    crossing = {v: count(store, {"value": v, "matchCase": match_case})[0] for v in across}
    folded = [v if match_case else v.lower() for v in across]
    assert crossing == {
        v: sum(f in raw for raw in raws) for v, f in zip(across, folded, strict=True)
    }
    assert sum(1 for n in crossing.values() if n) > 10
    store.close()


@pytest.mark.parametrize("match_case", [False, True], ids=["without case", "matchCase"])
def test_regexes_asked_as_needles_are_found_exactly_where_raw_holds_a_match(
    tmp_path_factory: pytest.TempPathFactory, match_case: bool
) -> None:
    """Needles of the characters above with digits made classes (``m-[0-9]+``,
    ``",\\d9``): those the compiler asks as their needles find what RE2 finds in raw."""
    rng = random.Random(31)
    store, records = _random_texts(tmp_path_factory, rng)
    classes = ["[0-9]", r"\d", "[01]", "[0-9]+", r"\d*"]
    patterns = set()  # none of the characters is a metacharacter of RE2
    for value in map("".join, product(_TRICKY, repeat=3)):
        if any(c.isdigit() for c in value):
            patterns.add("".join(rng.choice(classes) if c.isdigit() else c for c in value))
    asked = [
        p
        for p in sorted(patterns)
        if "match(raw, "
        not in needle_sql(Needle(value=p, isRegex=True, matchCase=match_case), Params())
    ]
    assert len(asked) > 60
    flags = 0 if match_case else re.IGNORECASE
    found = {
        p: count(store, {"value": p, "isRegex": True, "matchCase": match_case})[0] for p in asked
    }
    assert found == {p: sum(1 for r in records if re.search(p, r.raw, flags)) for p in asked}
    assert sum(1 for n in found.values() if n) > len(asked) // 3
    store.close()
