"""Pooled engine sessions carry nothing from one statement to the next.

chDB keeps the partial output of a statement that fails part way and hands it
to the next statement on the same session: without care, one tenant's rows come
back in another tenant's answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from limelight.errors import StoreError
from limelight.store.events.base import decode_result
from limelight.store.events.chdb_store import ChdbEventStore, SessionPool
from limelight.tenant import Tenant
from tests import query_reference as ref

# Each fails after the engine has produced part of its output.
FAILING = {
    "result over its limit": (
        "SELECT number % 100000 AS g, count() AS c FROM numbers(1000000) GROUP BY g"
        " SETTINGS max_result_bytes = 100000, result_overflow_mode = 'throw'"
    ),
    "timeout": (
        "SELECT number, sleepEachRow(0.001) AS z FROM numbers(100000)"
        " SETTINGS max_execution_time = 0.2, max_block_size = 10"
    ),
    "runtime error": (
        "SELECT number, throwIf(number = 70000) AS z FROM numbers(100000)"
        " SETTINGS max_block_size = 1000"
    ),
}


@pytest.fixture(scope="module")
def one_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChdbEventStore]:
    """A store of one read and one insert session, so the next statement surely gets
    the session the failed one ran on."""
    shared = ref.shared_chdb_store(tmp_path_factory)
    store = ChdbEventStore(shared.path, database="one_session", sessions=1, insert_sessions=1)
    store.start()
    yield store
    store.close()


@pytest.mark.parametrize("failure", sorted(FAILING))
def test_the_next_statement_gets_only_its_own_answer(
    one_session: ChdbEventStore, failure: str
) -> None:
    with pytest.raises(StoreError):
        one_session.query(FAILING[failure], {})
    assert one_session.query("SELECT 'mine' AS x", {}).rows == [{"x": "mine"}]
    assert one_session.query("SELECT 'mine' AS x", {}, ("x",)).rows == [{"x": "mine"}]


def test_a_session_whose_statement_failed_is_never_used_again(
    one_session: ChdbEventStore,
) -> None:
    # A temporary table lives in one session: seeing it tells which session answers.
    one_session.command("CREATE TEMPORARY TABLE marker (x UInt8) ENGINE = Memory")
    assert one_session.query("SELECT count() AS n FROM marker", {}).rows == [{"n": 0}]
    with pytest.raises(StoreError):
        one_session.command("THIS IS NOT SQL")
    with pytest.raises(StoreError, match="marker"):
        one_session.query("SELECT count() AS n FROM marker", {})


def test_an_answer_refused_as_not_the_statements_also_discards_the_session(
    one_session: ChdbEventStore,
) -> None:
    one_session.command("CREATE TEMPORARY TABLE marker2 (x UInt8) ENGINE = Memory")
    with pytest.raises(StoreError, match="columns"):
        one_session.query("SELECT 1 AS x", {}, ("y",))
    with pytest.raises(StoreError, match="marker2"):
        one_session.query("SELECT count() AS n FROM marker2", {})


def test_a_pool_replaces_a_session_whatever_raised_while_it_was_held(
    one_session: ChdbEventStore,
) -> None:
    pool = SessionPool(one_session.path, 1)
    pool.open()
    try:
        with pool.session() as s:
            s.query("CREATE TEMPORARY TABLE held (x UInt8) ENGINE = Memory")
        with pool.session() as s:
            s.query("SELECT * FROM held")  # the same session while nothing failed
        with pytest.raises(KeyError), pool.session():
            raise KeyError("not the engine's fault")
        with pool.session() as s, pytest.raises(Exception, match="held"):
            s.query("SELECT * FROM held")
    finally:
        pool.close()


def test_inserts_and_reads_still_work_after_failures(one_session: ChdbEventStore) -> None:

    tenant = Tenant("ws-sessions", "env-sessions")
    for sql in FAILING.values():
        with pytest.raises(StoreError):
            one_session.query(sql, {})
    ref.store_events(one_session, tenant, "ds", [{"message": "after failures"}])
    rows = one_session.query(
        f"SELECT raw FROM {one_session.table} WHERE workspace_id = {{ws:String}}",
        {"ws": tenant.workspace_id},
        ("raw",),
    ).rows
    assert [orjson.loads(r["raw"]) for r in rows] == [{"message": "after failures"}]


# -- the answer must be the statement's own --------------------------------------------


def _answer(columns: list[str], rows: list[dict[str, Any]]) -> bytes:
    return orjson.dumps(
        {
            "meta": [{"name": c, "type": "String"} for c in columns],
            "data": rows,
            "rows": len(rows),
            "statistics": {"elapsed": 0.001, "rows_read": 7, "bytes_read": 70},
        }
    )


def test_a_whole_answer_is_accepted_with_its_statistics() -> None:
    result = decode_result(_answer(["x"], [{"x": "mine"}]), ("x",))
    assert (result.rows, result.rows_read, result.bytes_read) == ([{"x": "mine"}], 7, 70)


def test_output_left_before_the_answer_is_refused_whatever_its_shape() -> None:
    theirs = _answer(["g0_0", "v0"], [{"g0_0": "their-request", "v0": 1}])
    mine = _answer(["g0_0", "v0"], [{"g0_0": "mine", "v0": 2}])
    for leftover in (theirs, theirs[: len(theirs) // 2], b'{"g":1,"c":10}\n'):
        with pytest.raises(StoreError):
            decode_result(leftover + mine, ("g0_0", "v0"))


def test_an_answer_with_other_columns_or_a_wrong_row_count_is_refused() -> None:
    with pytest.raises(StoreError, match="columns"):
        decode_result(_answer(["g0_0"], []), ("g0_0", "v0"))
    broken = orjson.loads(_answer(["x"], [{"x": "a"}]))
    broken["rows"] = 2
    with pytest.raises(StoreError, match="whole"):
        decode_result(orjson.dumps(broken), ("x",))
