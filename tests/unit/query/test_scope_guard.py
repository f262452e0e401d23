"""Only ``Scope`` makes a statement over a tenant's events: the types it hands out take a
seal no other module holds, and no other module may define a statement type."""

from __future__ import annotations

from typing import Any

import pytest

from limelight.errors import LimelightError
from limelight.query.scope import CompiledQuery, Condition, Scope, Select, partition_days
from limelight.query.sql import Params
from limelight.scoped import ScopedStatement, require_scoped
from limelight.times import Timeframe

SCOPE = Scope("ws_guard", "env_guard")


def _statement() -> CompiledQuery:
    params = Params()
    select = SCOPE.select("count() AS n", "db.events", SCOPE.where(params))
    return SCOPE.statement(select, params, ("n",))


def test_a_statement_scope_made_begins_with_the_tenant_filter_and_ends_with_the_limits() -> None:
    statement = _statement()
    assert statement.sql.startswith(
        "SELECT count() AS n FROM db.events WHERE workspace_id = {p0:String}"
        " AND environment_id = {p1:String} SETTINGS max_execution_time = 10,"
    )
    assert statement.params == {"p0": "ws_guard", "p1": "env_guard"}
    assert require_scoped(statement) is statement


NOT_NAMES = ["x = 1, readonly", "max_threads; DROP TABLE t", "Max-Threads", ""]


@pytest.mark.parametrize("name", NOT_NAMES)
def test_a_setting_asked_of_the_engine_is_a_plain_name(name: str) -> None:
    params = Params()
    select = SCOPE.select("count() AS n", "db.events", SCOPE.where(params))
    asked = SCOPE.statement(select, params, ("n",), (("max_threads", 1),))
    assert asked.sql.endswith(SCOPE.settings() + ", max_threads = 1")
    with pytest.raises(LimelightError, match="not a setting's name"):
        SCOPE.statement(select, params, ("n",), ((name, 1),))


def test_a_select_over_selects_reads_only_what_they_read() -> None:
    params = Params()
    one = SCOPE.select("1 AS x", "db.events", SCOPE.where(params))
    two = SCOPE.select("2 AS x", "db.events", SCOPE.where(params))
    both = SCOPE.around([one, two], "sum(x) AS s", " LIMIT 1")
    assert both.sql == f"SELECT sum(x) AS s FROM (({one}) UNION ALL ({two})) LIMIT 1"
    assert SCOPE.around(one, "x").sql == f"SELECT x FROM ({one})"


def test_none_of_the_types_can_be_made_without_scope() -> None:
    fake: Any = object()  # any seal but the one scope.py holds
    with pytest.raises(TypeError, match="made by Scope"):
        CompiledQuery(fake, "SELECT raw FROM db.events", {}, ("raw",))
    with pytest.raises(TypeError, match="made by Scope"):
        Select(fake, "SELECT raw FROM db.events")
    with pytest.raises(TypeError, match="made by Scope"):
        Condition(fake, "1")
    with pytest.raises(TypeError, match="abstract"):
        ScopedStatement()  # type: ignore[abstract]


def test_a_statement_type_of_another_module_is_refused_when_it_is_defined() -> None:
    with pytest.raises(TypeError, match="limelight.query.scope"):

        class Unscoped(ScopedStatement):  # the test module is not scope.py
            sql = "SELECT raw FROM db.events"


def test_text_or_a_look_alike_is_not_a_scoped_statement() -> None:
    statement = _statement()

    class LookAlike:
        sql, params, columns = statement.sql, statement.params, statement.columns

    for not_scoped in ("SELECT raw FROM db.events", LookAlike()):
        with pytest.raises(TypeError, match="only statements made by Scope"):
            require_scoped(not_scoped)


@pytest.mark.parametrize(
    "more",
    [
        "dataset = {p2:String} OR 1",  # `tenant AND dataset OR 1`: every tenant's rows
        "dataset = {p2:String} or service = {p3:String}",
        "x = 1) OR (1",  # closes a parenthesis it did not open
        # The keyword written against what follows it: ClickHouse still reads an OR.
        "a = 1 OR(b = 2)",
        "a = 1 OR`service` = 'x'",
        "a = 1 OR-1",
        "a = 1 OR[1][1]",
    ],
)
def test_a_condition_that_would_widen_the_tenant_filter_is_refused(more: str) -> None:
    with pytest.raises(LimelightError, match="widen the tenant filter"):
        SCOPE.where(Params(), lambda _: [more])
    condition = SCOPE.where(Params())
    with pytest.raises(LimelightError, match="widen the tenant filter"):
        SCOPE.select("raw", "db.events", condition, f" AND {more} ORDER BY timestamp")


def test_an_or_in_parentheses_a_quoted_name_or_after_the_where_narrows_nothing_away() -> None:
    params = Params()
    inside = "(dataset = 'a' OR data.`x OR y`.:String = 'b')"
    condition = SCOPE.where(params, lambda _: [inside, "or(a, b)"])
    assert condition.sql.endswith(f"AND {inside} AND or(a, b)")
    tail = " AND data.`OR` = 1 GROUP BY k HAVING count() > 1 OR max(n) > 2"
    assert SCOPE.select("k", "db.events", condition, tail).sql.endswith(tail)


def test_a_table_read_without_the_tenant_filter_is_refused_wherever_it_is_written() -> None:
    params = Params()
    condition = SCOPE.where(params)
    own = SCOPE.select("raw", "db.events", condition)
    unscoped = [
        SCOPE.select(
            "(SELECT groupArray(raw) FROM db.events) AS every_raw", "db.events", condition
        ),
        SCOPE.select("raw", "db.events", condition, " AND id IN (SELECT id FROM db.events)"),
        SCOPE.around(own, "raw", " UNION ALL SELECT raw FROM db.events"),
        SCOPE.select("raw", "db.events", condition, " AND 1 UNION ALL SELECT raw FROM db.events"),
        SCOPE.around(own, "raw", " JOIN db.events USING id"),
    ]
    for select in unscoped:
        with pytest.raises(LimelightError, match="outside the tenant filter"):
            SCOPE.statement(select, params, ("raw",))
    # Another tenant's filter is not this scope's.
    other = Scope("ws_other", "env_other")
    theirs = other.select("raw", "db.events", other.where(Params()))
    with pytest.raises(LimelightError, match="outside the tenant filter"):
        SCOPE.statement(theirs, Params(), ("raw",))


def test_a_subquery_made_by_the_scope_and_an_array_join_are_reads_of_the_tenant() -> None:
    params = Params()
    condition = SCOPE.where(params)
    ids = SCOPE.select("id", "db.events", condition, " AND dataset = 'a'")
    tail = f" AND id IN ({ids}) ARRAY JOIN tags AS t"
    statement = SCOPE.statement(SCOPE.select("t", "db.events", condition, tail), params, ("t",))
    assert statement.sql.count("WHERE workspace_id = {p0:String}") == 2


def test_an_index_dictionary_is_read_only_as_scope_wrote_it_for_the_statement() -> None:
    params = Params()
    frame = Timeframe(1_795_000_000_000, 1_795_003_600_000)
    tokens = SCOPE.dictionary(params, "db.events", "raw_phrases", "token = 'a'", frame)
    condition = SCOPE.where(params, lambda _: [f"hasAnyTokens(raw, {tokens}.2)"])
    statement = SCOPE.statement(
        SCOPE.select("count() AS n", "db.events", condition), params, ("n",)
    )
    assert "FROM mergeTreeTextIndex(db, events, raw_phrases) WHERE part_name >= " in statement.sql
    assert params.values["p0"] == "20261118" and params.values["p1"] == "20261119"
    # The same text written by hand, one made for another statement, the whole dictionary
    # or another table's: reads outside the tenant filter.
    made = SCOPE.dictionary(Params(), "db.events", "raw_phrases", "token = 'a'", frame)
    for read in (
        made,
        "(SELECT groupArray(token) FROM mergeTreeTextIndex(db, events, raw_phrases))",
        made.replace("db, events", "db, other"),
    ):
        params = Params()
        SCOPE.dictionary(params, "db.events", "raw_phrases", "token = 'b'", frame)
        more = [f"hasAnyTokens(raw, {read})"]
        condition = SCOPE.where(params, lambda _: more)  # noqa: B023 (used at once)
        with pytest.raises(LimelightError, match="outside the tenant filter"):
            SCOPE.statement(SCOPE.select("count() AS n", "db.events", condition), params, ("n",))
    with pytest.raises(LimelightError, match="not a plain name"):
        SCOPE.dictionary(Params(), "db.events", "x) UNION ALL SELECT 1 --", "1", frame)
    # Its test reads no table: the read is allowed whole, so what is inside is not checked.
    with pytest.raises(LimelightError, match="a table read in a dictionary's test"):
        SCOPE.dictionary(
            Params(), "db.events", "raw_phrases", "token IN (SELECT raw FROM db.events)", frame
        )


def test_the_days_of_a_timeframe_end_with_its_last_millisecond() -> None:
    day = 86_400_000
    assert partition_days(Timeframe(0, day)) == ("19700101", "19700102")
    assert partition_days(Timeframe(0, day + 1)) == ("19700101", "19700103")
    assert partition_days(Timeframe(-5 * day, 10**15)) == ("19700101", "21490606")


def test_a_read_of_long_events_asks_their_sizes_first_and_nothing_else() -> None:
    params = Params()
    longer = params.add(4096, "UInt32")
    long = SCOPE.select("count() AS n", "db.events", SCOPE.where(params), longer_than=longer)
    assert " FROM db.events PREWHERE raw.size > {p0:UInt32} WHERE workspace_id = " in long.sql
    SCOPE.statement(long, params, ("n",))
    # Another PREWHERE before the tenant filter is a read outside it.
    params = Params()
    other = SCOPE.select("count() AS n", "db.events PREWHERE 1", SCOPE.where(params))
    with pytest.raises(LimelightError, match="outside the tenant filter"):
        SCOPE.statement(other, params, ("n",))
