"""Whatever query a client saves or runs, it is refused with a 400 or it runs.

A spec is validated and compiled (the compiler may raise nothing but a 400),
and a valid one runs on chDB over events of every shape: it completes, or
fails with a sentence in the user's terms that holds nothing of the engine's
plan (no tenant id, no ``__table``, no ``FUNCTION``).
"""

from __future__ import annotations

import time
from typing import Any

import orjson
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from limelight.errors import BadRequest
from limelight.query.compile import Plan, RunOptions, Timeframe, compile_run
from limelight.query.events_plan import MAX_OFFSET
from limelight.query.keys import UNKNOWN, StoredTypes
from limelight.query.spec import MAX_LIMIT, QueryFields, validate_fields
from limelight.runs.execute import RunFailed, execute_plan, typed_plan
from limelight.runs.limits import RunLimits
from limelight.settings import Settings
from limelight.tenant import Tenant
from limelight.times import DAY_MS
from tests import query_reference as ref
from tests.properties.strategies import query_specs, well_formed_specs

TENANT = Tenant("ws_properties_q", "env_properties_q")
NOW_MS = 1_795_000_000_000
EVENTS_FRAME = Timeframe(NOW_MS - 3_600_000, NOW_MS)
MAX_UNIX_MS = 253_402_300_799_999
LIMITS = RunLimits.from_settings(Settings())


@st.composite
def timeframes(draw: st.DrawFn) -> Timeframe:
    """Mostly the hour holding the events; sometimes anywhere a run may ask for."""
    if draw(st.booleans()):
        return EVENTS_FRAME
    start = draw(st.integers(0, MAX_UNIX_MS))
    end = draw(st.integers(start, min(MAX_UNIX_MS, start + 30 * DAY_MS)))
    return Timeframe(start, end)


run_options = st.builds(
    RunOptions,
    limit=st.integers(1, MAX_LIMIT),
    offset=st.one_of(st.just(0), st.integers(0, MAX_OFFSET)),
    granularity_ms=st.one_of(st.none(), st.integers(1, MAX_UNIX_MS)),
)
stored_types = st.one_of(
    st.just(UNKNOWN),
    st.dictionaries(
        st.sampled_from(["duration", "status", "tags", "data", "a{b", "message", "error"]),
        st.frozensets(
            st.sampled_from(
                [
                    "String",
                    "Int64",
                    "UInt64",
                    "Float64",
                    "Bool",
                    "Array(Nullable(String))",
                    "Array(Nullable(Int64))",
                    "Array(Dynamic)",
                ]
            )  # fmt: skip
        ),
    ).map(StoredTypes),
)


def compile_for(fields: QueryFields, frame: Timeframe, options: RunOptions, table: str) -> Any:
    def compile_with(stored: StoredTypes) -> Plan:
        return compile_run(
            fields,
            workspace_id=TENANT.workspace_id,
            environment_id=TENANT.environment_id,
            table=table,
            timeframe=frame,
            options=options,
            stored=stored,
            dictionaries=table,
        )

    return compile_with


@given(
    spec=st.one_of(query_specs(), well_formed_specs()),
    frame=timeframes(),
    options=run_options,
    stored=stored_types,
)
def test_any_spec_is_refused_with_a_400_or_compiles_tenant_scoped(
    spec: dict[str, Any], frame: Timeframe, options: RunOptions, stored: StoredTypes
) -> None:
    try:
        fields = validate_fields(spec)
    except BadRequest as exc:
        assert exc.errors, exc
        return
    plan = compile_for(fields, frame, options, "limelight.events")(stored)
    for statement in plan.statements.by_name().values():
        where = statement.sql.split(" WHERE ", 1)[1]
        assert where.startswith("workspace_id = {p0:String} AND environment_id = {p1:String}")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    store = ref.shared_chdb_store(tmp_path_factory)
    events = ref.generate_events(300, seed=11, now_ms=NOW_MS - 1, span_ms=3_500_000)
    objects: list[dict[str, Any]] = [
        {"timestamp": NOW_MS - 10 - i, "error": shape}
        for i, shape in enumerate(
            [{"message": "boom", "stack": "at x"}, {}, {"a": None}, [], [{"m": 1}], "text", None]
        )
    ]
    ref.store_events(store, TENANT, "props", events + objects)
    return store


@given(
    spec=st.one_of(query_specs(), well_formed_specs(), well_formed_specs()),
    frame=timeframes(),
    options=run_options,
    typed=st.booleans(),
)
def test_any_valid_spec_runs_or_fails_in_the_users_terms(
    store: Any,
    spec: dict[str, Any],
    frame: Timeframe,
    options: RunOptions,
    typed: bool,
) -> None:
    try:
        fields = validate_fields(spec)
    except BadRequest:
        event("refused at validation")
        return
    compile_with = compile_for(fields, frame, options, store.table)
    try:
        plan = compile_with(UNKNOWN)
        if typed:
            plan = typed_plan(store, TENANT, fields, plan, compile_with, LIMITS)
        data = execute_plan(store, plan, LIMITS, time.monotonic() + 60)
    except RunFailed as exc:
        event("failed run")
        message = str(exc)
        for internal in (TENANT.workspace_id, TENANT.environment_id, "__table", "FUNCTION"):
            assert internal not in message, message
        assert "DB::Exception" not in message and "Stack trace" not in message, message
        return
    event("completed run")
    orjson.loads(data)
