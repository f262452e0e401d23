"""The reads over spans on chDB: every golden case (and searches drawn at random) answers
as a plain-Python evaluation of the same spans does; another tenant's spans, the
dataset's log records and spans outside the timeframe are never part of an answer."""

from __future__ import annotations

import random
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from limelight.query.keys import StoredTypes
from limelight.query.plans import CompiledQuery, Timeframe
from limelight.query.scope import RunOptions, Scope
from limelight.query.services import Series, overview_statement, shape_errors, shape_overview
from limelight.query.spans import HOUR_MS
from limelight.query.traces import TraceSearchPlan, compile_search, shape_traces, validate_search
from limelight.runs.limits import RunLimits
from limelight.runs.lookups import stored_types
from limelight.settings import Settings
from limelight.tenant import Tenant
from tests import query_reference as ref
from tests.unit.query.golden_cases import WORKSPACE
from tests.unit.query.golden_span_cases import (
    DATASET,
    ENVIRONMENT,
    ERRORS,
    FRAME,
    OVERVIEWS,
    SEARCHES,
    STORED,
    TIMEFRAME,
    compile_case,
    overview_plan,
    scope,
    search_plan,
)

TENANT = Tenant(WORKSPACE, ENVIRONMENT)
SERVICES = ["gateway", "orders", "users", "batch"]
NAMES = ["GET /api/cart", "POST /api/orders", "SELECT orders", "redis GET", "publish"]
KINDS = ["SERVER", "CLIENT", "INTERNAL", "CONSUMER", "PRODUCER"]
ERRORS_TEXT = ["timeout", "connection refused", "404 from upstream"]
REGIONS = ["eu", "us", "ap"]


def _span(rng: random.Random, trace: str, ts: int, service: str, **fields: Any) -> dict[str, Any]:
    failed = rng.random() < 0.12
    span: dict[str, Any] = {
        "timestamp": ts,
        "service": service,
        "traceId": trace,
        "spanId": f"{rng.getrandbits(64):016x}",
        "name": rng.choice(NAMES),
        "kind": rng.choice(KINDS),
        "status": {"code": "ERROR" if failed else rng.choice(["UNSET", "OK"])},
        "attributes": {
            "http": {"status_code": rng.choice([200, 201, 404, 500, 503])},
            "region": rng.choice(REGIONS),
        },
    }
    if rng.random() < 0.9:  # some spans have no end time, so no duration
        span["duration"] = rng.choice([rng.randrange(1, 900), round(rng.uniform(0, 900), 3)])
    if failed:
        span["error"] = rng.choice(ERRORS_TEXT)
    span.update(fields)
    return span


def generate_spans(seed: int) -> list[dict[str, Any]]:
    """About 200 traces over the timeframe and past its edges: a root (missing in some),
    children in the services; the `batch` service has no entry spans."""
    rng = random.Random(seed)
    spans: list[dict[str, Any]] = []
    for i in range(200):
        trace = f"{rng.getrandbits(128):032x}"
        # Distinct starts (the order's ties are broken by a hash the reference cannot
        # compute); a few traces start before the timeframe or end after it.
        start = TIMEFRAME.from_ms - 60_000 + i * 18_607
        batch = rng.random() < 0.15
        root = _span(
            rng,
            trace,
            start,
            "batch" if batch else "gateway",
            kind="INTERNAL" if batch else "SERVER",
        )
        if rng.random() > 0.1:  # a trace whose root was not received
            spans.append(root)
        for j in range(rng.randrange(0, 9)):
            service = "batch" if batch else rng.choice(SERVICES[:3])
            kind = "INTERNAL" if batch else rng.choice(KINDS)
            ts = start + 1 + j * rng.randrange(1, 40_000)
            spans.append(_span(rng, trace, ts, service, kind=kind, parentSpanId=root["spanId"]))
    return spans


@pytest.fixture(scope="session")
def query_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield ref.shared_chdb_store(tmp_path_factory)


@pytest.fixture(scope="module")
def spans(query_store: Any) -> list[ref.Record]:
    events = generate_spans(seed=11)
    records = ref.store_events(query_store, TENANT, DATASET, events)
    # Log records of the same traces in the dataset: a trace id and a span id, no kind.
    logs = [
        {"timestamp": e["timestamp"], "traceId": e["traceId"], "spanId": e["spanId"],
         "message": "handled", "service": e["service"]}
        for e in events[:60]
    ]  # fmt: skip
    ref.store_events(query_store, TENANT, DATASET, logs)
    # The same spans in another environment of the workspace and in another dataset.
    ref.store_events(query_store, Tenant(WORKSPACE, "env_spans_other"), DATASET, events)
    ref.store_events(query_store, TENANT, "other-spans", events[:50])
    return records


def run(query_store: Any, name: str) -> list[dict[str, Any]]:
    statement = compile_case(name, query_store.table)
    rows: list[dict[str, Any]] = query_store.query(statement.sql, statement.params).rows
    return rows


# ---------------------------------------------------------------- the reference


def _in_frame(records: list[ref.Record], frame: Timeframe = TIMEFRAME) -> list[ref.Record]:
    return [
        r
        for r in records
        if frame.from_ms <= r.system["_timestamp"] < frame.to_ms
        and isinstance(r.flat.get("traceId"), str)
        and isinstance(r.flat.get("kind"), str)
    ]


def _failed(r: ref.Record) -> bool:
    return r.flat.get("status.code") == "ERROR"


def _root(r: ref.Record) -> bool:
    return not r.flat.get("parentSpanId")


def _duration(r: ref.Record) -> float:
    value = r.flat.get("duration")
    return float(value) if isinstance(value, int | float) else 0.0


def _end(r: ref.Record, frm: int) -> float:
    """A span's end from the timeframe's start, summed as the statements sum it (query
    .traces): its hour's start from the timeframe's, plus its end past that hour."""
    hour, in_hour = divmod(r.system["_timestamp"], HOUR_MS)
    return hour * HOUR_MS - frm + (in_hour + _duration(r))


def _matches(r: ref.Record, search: dict[str, Any]) -> bool:
    if search.get("services") and r.system["_service"] not in search["services"]:
        return False
    if "name" in search and r.flat.get("name") != search["name"]:
        return False
    if search.get("status") == "error" and not _failed(r):
        return False
    if search.get("status") == "ok" and _failed(r):
        return False
    return all(ref.matches_filter(r, f) for f in search.get("filters") or [])


def reference_search(records: list[ref.Record], search: dict[str, Any]) -> list[dict[str, Any]]:
    frame = Timeframe(search["from"], search["to"])
    traces: dict[str, list[ref.Record]] = defaultdict(list)
    for r in _in_frame(records, frame):
        traces[r.flat["traceId"]].append(r)
    found = []
    for trace_id, spans in traces.items():
        start = min(r.system["_timestamp"] for r in spans)
        frm = frame.from_ms
        duration = max(_end(r, frm) for r in spans) - (start - frm)
        if not any(_matches(r, search) for r in spans):
            continue
        if duration < search.get("minDuration", 0) or duration > search.get(
            "maxDuration", float("inf")
        ):
            continue
        roots = sorted((r for r in spans if _root(r)), key=lambda r: r.system["_timestamp"])
        found.append(
            {
                "traceId": trace_id,
                "start": start,
                "duration": pytest.approx(duration),
                "rootService": roots[0].system["_service"] if roots else None,
                "rootName": roots[0].flat.get("name") if roots else None,
                "spans": len(spans),
                "errors": sum(_failed(r) for r in spans),
                "services": sorted({r.system["_service"] for r in spans}),
            }
        )
    if search.get("orderBy") == "duration":
        found.sort(key=lambda t: (-t["duration"].expected, -t["start"]))
    else:
        found.sort(key=lambda t: -t["start"])
    return found[: search.get("limit", 20)]


def _percentile(values: list[float], level: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    rank = level * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _figures(spans: list[ref.Record]) -> dict[str, Any]:
    durations = [float(r.flat["duration"]) for r in spans if "duration" in r.flat]
    errors = sum(_failed(r) for r in spans)
    return {
        "requests": len(spans),
        "errors": errors,
        "errorRate": pytest.approx(errors / len(spans)),
        **{
            label: None if (p := _percentile(durations, level)) is None else pytest.approx(p)
            for label, level in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))
        },
    }


def _counted(spans: list[ref.Record]) -> list[ref.Record]:
    """A service's entry spans, or its roots when it has none."""
    entries = [r for r in spans if r.flat.get("kind") in ("SERVER", "CONSUMER")]
    return entries or [r for r in spans if _root(r)]


def reference_overview(records: list[ref.Record], service: str | None) -> list[dict[str, Any]]:
    by_service: dict[str, list[ref.Record]] = defaultdict(list)
    for r in _in_frame(records):
        by_service[r.system["_service"]].append(r)
    if service is None:
        return [
            {"service": name, **_figures(counted)}
            for name, spans in sorted(by_service.items())
            if (counted := _counted(spans))
        ]
    by_name: dict[str, list[ref.Record]] = defaultdict(list)
    for r in _counted(by_service.get(service, [])):
        by_name[r.flat["name"]].append(r)
    out = [{"operation": name, **_figures(spans)} for name, spans in by_name.items()]
    return sorted(out, key=lambda o: (-o["requests"], o["operation"]))


def reference_errors(records: list[ref.Record], service: str) -> list[dict[str, Any]]:
    by_error: dict[str, list[ref.Record]] = defaultdict(list)
    for r in _in_frame(records):
        if r.system["_service"] == service and _failed(r):
            by_error[r.flat["error"]].append(r)
    out = []
    for error, spans in by_error.items():
        newest = max(spans, key=lambda r: r.system["_timestamp"])
        out.append(
            {
                "error": error,
                "count": len(spans),
                "lastSeen": newest.system["_timestamp"],
                "traceId": newest.flat["traceId"],
                "operations": sorted({r.flat["name"] for r in spans})[:10],
            }
        )
    return sorted(out, key=lambda e: (-e["count"], -e["lastSeen"], e["error"]))


# ---------------------------------------------------------------- the tests


def test_the_span_keys_are_stored_as_the_golden_cases_say(
    query_store: Any, spans: list[ref.Record]
) -> None:
    """The golden statements read the types STORED names: those the spans hold."""
    limits = RunLimits.from_settings(Settings(data_dir="/nonexistent"))
    held = stored_types(query_store, TENANT, sorted(STORED.paths or {}), limits)
    assert set(held) == set(STORED.paths or {})
    for key, types in held.items():
        assert types <= (STORED.paths or {})[key], key


def search(
    query_store: Any, plan: TraceSearchPlan, visited: list[int] | None = None
) -> list[dict[str, Any]]:
    def rows(statement: CompiledQuery) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = query_store.query(statement.sql, statement.params).rows
        return found

    traces: list[dict[str, Any]] = plan.answer(rows, visited)["traces"]
    return traces


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_a_golden_search_finds_the_traces_the_reference_finds(
    name: str, query_store: Any, spans: list[ref.Record]
) -> None:
    answer = search(query_store, search_plan(name, query_store.table))
    expected = reference_search(spans, {**FRAME, **SEARCHES[name]})
    assert expected, "a case that finds nothing proves little"
    assert answer == expected


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_every_step_of_a_golden_search_that_fills_its_page_answers_as_the_reference(
    name: str, query_store: Any, spans: list[ref.Record]
) -> None:
    """A window of the newest spans answers only when it holds a whole page: then its
    page is the timeframe's, though traces that began before it reach into it."""
    plan = search_plan(name, query_store.table)
    expected = reference_search(spans, {**FRAME, **SEARCHES[name]})
    visited: list[int] = []
    search(query_store, plan, visited)
    for window in dict.fromkeys([*visited, plan.search.from_]):
        step = plan.step(window)
        rows = plan.step_rows(step, lambda s: query_store.query(s.sql, s.params).rows)
        if len(rows) >= plan.limit:
            assert shape_traces(rows[: plan.limit])["traces"] == expected


def test_a_window_short_of_a_page_is_widened_without_asking_what_reaches_into_it(
    query_store: Any, spans: list[ref.Record]
) -> None:
    """Which traces reach into a window from before it only matters for a window that
    holds a page: a short one is widened whatever the answer, so it costs one statement,
    and the answer stays the reference's."""
    for limit in (5, 10, 20, 50, 100, 200):
        search = validate_search({**FRAME, "limit": limit})
        plan = compile_search(search, scope(), query_store.table, STORED)
        assert plan is not None
        held: list[int] = []  # the rows of each statement, in order

        def rows(statement: CompiledQuery, held: list[int] = held) -> list[dict[str, Any]]:
            found: list[dict[str, Any]] = query_store.query(statement.sql, statement.params).rows
            held.append(len(found))
            return found

        visited: list[int] = []
        answer = plan.answer(rows, visited)
        assert answer["traces"] == reference_search(spans, {**FRAME, "limit": limit})
        if any(0 < n < limit for n in held[: len(visited) - 1]):
            # One statement a window, and one check of the window that answered.
            assert len(held) == len(visited) + (visited[-1] != search.from_)
            return
    raise AssertionError("no limit left a window short but not empty: the case proves little")


def test_the_latest_traces_are_found_in_a_window_past_traces_that_reach_into_it(
    query_store: Any, spans: list[ref.Record]
) -> None:
    """The newest page comes from a window of the timeframe's last minutes, and a trace
    that began long before it (with spans in it) is not taken for a new one."""
    plan = search_plan("search_all", query_store.table)

    visited: list[int] = []
    search(query_store, plan, visited)
    window = visited[-1]
    assert window > TIMEFRAME.from_ms
    reaching = [
        t
        for t in reference_search(spans, {**FRAME, "limit": 1000})
        if t["start"] < window <= t["start"] + t["duration"].expected
    ]
    assert reaching, "no trace reaches into the answering window: the case proves little"
    assert search(query_store, plan) == reference_search(spans, {**FRAME, **SEARCHES["search_all"]})


@pytest.mark.parametrize("name", sorted(OVERVIEWS))
def test_a_golden_overview_answers_as_the_reference(
    name: str, query_store: Any, spans: list[ref.Record]
) -> None:
    case = OVERVIEWS[name]
    series = Series(TIMEFRAME, case.series_ms) if case.series_ms else None
    plan = overview_plan(name, query_store.table)
    label = "service" if case.service is None else "operation"
    answer = shape_overview(
        plan, plan.answer(lambda s: query_store.query(s.sql, s.params).rows), label
    )
    expected = reference_overview(spans, case.service)[: case.limit]
    assert expected
    assert [{k: v for k, v in a.items() if k != "series"} for a in answer] == expected
    # The one-pass statement a short full page falls back to answers alike.
    both = plan.both()
    assert shape_overview(plan, query_store.query(both.sql, both.params).rows, label) == answer
    if series is not None:
        for item in answer:
            counted = _counted([r for r in _in_frame(spans) if r.system["_service"] == item[label]])
            step = series.granularity_ms
            buckets: list[list[ref.Record]] = [[] for _ in range(series.count)]
            for r in counted:
                buckets[(r.system["_timestamp"] - TIMEFRAME.from_ms) // step].append(r)
            per_bucket = [
                {
                    "time": TIMEFRAME.from_ms + i * step,
                    "requests": len(inside),
                    "errors": sum(_failed(r) for r in inside),
                }
                for i, inside in enumerate(buckets)
            ]
            assert item["series"] == per_bucket


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_a_services_errors_are_grouped_as_the_reference_groups_them(
    name: str, query_store: Any, spans: list[ref.Record]
) -> None:
    case = ERRORS[name]
    answer = shape_errors(run(query_store, name))
    expected = reference_errors(spans, case.service)[: case.limit]
    assert expected
    assert answer == expected


def _random_search(rng: random.Random) -> dict[str, Any]:
    search: dict[str, Any] = {"limit": rng.choice([5, 20, 1000])}
    if rng.random() < 0.4:
        search["services"] = rng.sample(SERVICES, rng.randrange(1, 3))
    if rng.random() < 0.3:
        search["name"] = rng.choice(NAMES)
    if rng.random() < 0.3:
        search["status"] = rng.choice(["error", "ok"])
    if rng.random() < 0.3:
        search["minDuration"] = rng.randrange(0, 400)
    if rng.random() < 0.3:
        search["maxDuration"] = rng.randrange(400, 2000)
    if rng.random() < 0.5:
        search["filters"] = [
            rng.choice(
                [
                    {"key": "attributes.region", "operation": "=", "value": rng.choice(REGIONS)},
                    {"key": "attributes.http.status_code", "operation": ">", "value": 404},
                    {"key": "duration", "operation": "DOES_NOT_EXIST"},
                    {"key": "error", "operation": "STARTS_WITH", "value": "conn"},
                    {"key": "kind", "operation": "NOT_IN", "value": "SERVER, CLIENT"},
                ]
            )
        ]
    search["orderBy"] = rng.choice(["start", "duration"])
    return search


def test_random_searches_find_what_the_reference_finds(
    query_store: Any, spans: list[ref.Record]
) -> None:
    from limelight.query.traces import compile_search, validate_search
    from tests.unit.query.golden_span_cases import scope

    rng = random.Random(5)
    stored = StoredTypes(STORED.paths, {"duration": {}, "kind": {}, "error": {}})
    for _ in range(60):
        body = {**FRAME, **_random_search(rng)}
        plan = compile_search(validate_search(body), scope(), query_store.table, stored)
        assert plan is not None
        assert search(query_store, plan) == reference_search(spans, body), body


def test_a_full_page_of_services_is_not_cut_short_by_a_service_with_neither_entry_nor_root(
    query_store: Any,
) -> None:
    """A service whose spans are all children of no entry kind has no requests: the page
    of two services is the next two by name, not one."""
    tenant = Tenant(WORKSPACE, "env_spans_no_requests")
    rng = random.Random(3)
    events = [
        _span(rng, f"{i:032x}", TIMEFRAME.from_ms + 1_000 * i, service, kind=kind, **parent)
        for i, (service, kind, parent) in enumerate(
            [
                ("a-client", "CLIENT", {"parentSpanId": "00000000000000aa"}),
                ("b-api", "SERVER", {}),
                ("c-api", "CONSUMER", {"parentSpanId": "00000000000000cc"}),
            ]
        )
    ]
    ref.store_events(query_store, tenant, DATASET, events)
    plan = overview_statement(
        Scope(tenant.workspace_id, tenant.environment_id, RunOptions()),
        query_store.table,
        DATASET,
        TIMEFRAME,
        STORED,
        limit=2,
    )
    assert plan is not None
    rows = plan.answer(lambda s: query_store.query(s.sql, s.params).rows)
    assert [(r["grp"], r["requests"]) for r in rows] == [("b-api", 1), ("c-api", 1)]


# ------------------------------------------- the span columns (DDL 0020), whatever the types


def _odd_spans(seed: int) -> list[dict[str, Any]]:
    """Spans whose keys are stored as every type a read must take or leave: durations as
    Int64, Float64 and UInt64 (past Int64's range), trace ids and status codes that are
    numbers (an event with a numeric trace id is no span), an empty parent span id (a
    root)."""
    rng = random.Random(seed)
    events = generate_spans(seed)
    for i, event in enumerate(events):
        if i % 7 == 0:
            event["duration"] = 2**63 + rng.randrange(1, 10**6)
        elif i % 11 == 0:
            event["traceId"] = rng.randrange(1, 10**9)
        elif i % 13 == 0:
            event["status"] = {"code": 2}
        elif i % 17 == 0 and "parentSpanId" in event:
            event["parentSpanId"] = ""
    return events


def _searches() -> list[dict[str, Any]]:
    return [
        {**FRAME, "orderBy": "duration", "limit": 1000},
        {**FRAME, "services": ["orders"], "orderBy": "duration", "limit": 7},
        {**FRAME, "status": "error", "limit": 1000},
        {**FRAME, "minDuration": 300, "maxDuration": 900, "limit": 1000},
        {**FRAME, "limit": 5},
    ]


def _answers(store: Any, tenant: Tenant) -> tuple[list[Any], list[Any]]:
    from limelight.runs.spans import search_traces, service_overview

    limits = RunLimits.from_settings(Settings(data_dir="/nonexistent"))
    deadline = time.monotonic() + 60
    searches = [
        search_traces(store, tenant, validate_search(body), limits, deadline)["traces"]
        for body in _searches()
    ]
    overviews = [
        service_overview(store, tenant, DATASET, TIMEFRAME, limits, deadline, service=service)
        for service in (None, "gateway", "batch")
    ]
    return searches, overviews


def _expected(records: list[ref.Record]) -> tuple[list[Any], list[Any]]:
    searches = [reference_search(records, body) for body in _searches()]
    overviews = [reference_overview(records, service) for service in (None, "gateway", "batch")]
    return searches, overviews


def test_spans_of_every_stored_type_are_read_as_the_reference_reads_them(
    query_store: Any,
) -> None:
    tenant = Tenant(WORKSPACE, "env_spans_odd_types")
    records = ref.store_events(query_store, tenant, DATASET, _odd_spans(seed=23))
    limits = RunLimits.from_settings(Settings(data_dir="/nonexistent"))
    held = stored_types(query_store, tenant, ["duration", "traceId", "status.code"], limits)
    assert held == {
        "duration": {"Int64", "Float64", "UInt64"},
        "traceId": {"String", "Int64"},
        "status.code": {"String", "Int64"},
    }
    searches, overviews = _answers(query_store, tenant)
    assert all(searches) and all(overviews)
    assert (searches, overviews) == _expected(records)


def test_spans_stored_before_the_span_columns_answer_alike_before_and_after_the_mutation(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """An upgrade: parts written before DDL 0020 have none of its columns, which the
    engine computes from `data` when such a part is read, until the file's mutation has
    written them. A database of its own: the mutation reads every part of it."""
    from limelight.store.events.chdb_store import ChdbEventStore
    from limelight.store.events.ddl import DdlTarget, ddl_files

    shared = ref.shared_chdb_store(tmp_path_factory)
    database = f"spans_{uuid.uuid4().hex[:8]}"
    store = ChdbEventStore(shared.path, database=database)
    store.start()
    try:
        columns = ["trace_hash", "span_duration", "is_span", "is_root_span"]
        columns += ["is_error_span", "is_entry_span"]
        drop = ", ".join(f"DROP COLUMN {c}" for c in columns)
        # As before DDL 0020: without the trace projections over its columns (0021).
        projections = "DROP PROJECTION trace_ends, DROP PROJECTION trace_services"
        store.command(f"ALTER TABLE {store.table} {projections}, DROP INDEX trace_hashes, {drop}")
        tenant = Tenant(WORKSPACE, "env_spans_upgrade")
        records = ref.store_events(store, tenant, DATASET, _odd_spans(seed=29))
        (text,) = [text for version, text in ddl_files() if version == 20]
        added, index, _, materialize, materialize_index = DdlTarget(database).render(text)
        store.command(added)
        store.command(index)

        def written() -> set[str]:
            held = store.query(
                "SELECT DISTINCT column FROM system.parts_columns WHERE database = {db:String}"
                " AND table = 'events' AND active",
                {"db": database},
            ).rows
            return {r["column"] for r in held} & set(columns)

        assert written() == set()  # computed when read
        expected = _expected(records)
        assert _answers(store, tenant) == expected
        for statement in (materialize, materialize_index):
            store.command(f"{statement} SETTINGS mutations_sync = 2")
        assert written() == set(columns)
        assert _answers(store, tenant) == expected
    finally:
        store.command(f"DROP DATABASE {database}")
        store.close()


# ------------------------------------------------- the trace projections (DDL 0021)


def test_the_slowest_traces_of_a_service_read_the_trace_projections_for_whole_hours(
    query_store: Any, spans: list[ref.Record]
) -> None:
    """The hours the timeframe holds whole are read from the projections' rows rather
    than the spans (the edges, and the page's traces gathered whole, from the spans):
    fewer rows read than with the projections turned off, for the same answer."""
    plan = search_plan("search_services_past_an_edge", query_store.table)
    statement = plan.step(plan.search.from_).statement

    def read(setting: str) -> Any:
        sql = statement.sql.replace(
            " SETTINGS ", f" SETTINGS optimize_use_projections = {setting}, "
        )
        return query_store.query(sql, statement.params)

    summaries, spans_alone = read("1"), read("0")
    assert summaries.rows == spans_alone.rows and summaries.rows
    assert summaries.rows_read < spans_alone.rows_read


def test_parts_without_the_projections_and_deleted_spans_answer_as_the_reference(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Parts written before DDL 0021 have no projection until its mutation wrote them
    (the engine reads their spans instead), and a lightweight DELETE (retention, a
    tenant's removal) rebuilds the projections of the parts it touches: neither changes
    an answer. A database of its own: its parts are changed."""
    from limelight.store.events.chdb_store import ChdbEventStore

    shared = ref.shared_chdb_store(tmp_path_factory)
    database = f"spans_{uuid.uuid4().hex[:8]}"
    store = ChdbEventStore(shared.path, database=database)
    store.start()
    try:
        tenant = Tenant(WORKSPACE, ENVIRONMENT)
        events = generate_spans(seed=31)
        half = len(events) // 2
        records = ref.store_events(store, tenant, DATASET, events[:half])
        for name in ("trace_ends", "trace_services"):
            store.command(
                f"ALTER TABLE {store.table} CLEAR PROJECTION {name} SETTINGS mutations_sync = 2"
            )
        records += ref.store_events(store, tenant, DATASET, events[half:])
        held = store.query(
            "SELECT name, count() AS parts FROM system.projection_parts"
            " WHERE database = {db:String} AND active GROUP BY name ORDER BY name",
            {"db": database},
        ).rows
        assert held == [{"name": "trace_ends", "parts": 1}, {"name": "trace_services", "parts": 1}]

        def answers() -> list[Any]:
            return [
                search(store, search_plan(name, store.table))
                for name in ("search_slowest_hours", "search_services_past_an_edge")
            ]

        def expected(kept: list[ref.Record]) -> list[Any]:
            return [
                reference_search(kept, {**FRAME, **SEARCHES[name]})
                for name in ("search_slowest_hours", "search_services_past_an_edge")
            ]

        assert all(expected(records))
        assert answers() == expected(records)
        # The slowest trace of the orders service loses its spans of another service.
        slowest = expected(records)[0][0]["traceId"]
        store.command(
            f"DELETE FROM {store.table} WHERE data.traceId.:String = {{t:String}}"
            " AND service != 'orders'",
            {"t": slowest},
        )
        kept = [
            r for r in records if r.flat["traceId"] != slowest or r.system["_service"] == "orders"
        ]
        assert expected(kept) != expected(records)
        assert answers() == expected(kept)
    finally:
        store.command(f"DROP DATABASE {database}")
        store.close()


# ------------------------------------ the slowest traces drawn first (DDL 0022)


def _reads_into(query_store: Any, held: list[CompiledQuery]) -> Any:
    def rows(statement: CompiledQuery) -> list[dict[str, Any]]:
        held.append(statement)
        found: list[dict[str, Any]] = query_store.query(statement.sql, statement.params).rows
        return found

    return rows


def _slowest_of_orders(
    query_store: Any, environment: str, frm: int, to: int, limit: int, **more: Any
) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """The slowest traces of the orders service in ``environment``: the search, its
    answer and how many statements it took."""
    body = {
        "from": frm,
        "to": to,
        "dataset": DATASET,
        "services": ["orders"],
        "orderBy": "duration",
        "limit": limit,
        **more,
    }
    scoped = Scope(WORKSPACE, environment, RunOptions())
    plan = compile_search(validate_search(body), scoped, query_store.table, STORED)
    assert plan is not None
    held: list[CompiledQuery] = []
    return body, plan.answer(_reads_into(query_store, held))["traces"], len(held)


def test_random_slowest_searches_over_whole_hours_find_what_the_reference_finds(
    query_store: Any, spans: list[ref.Record]
) -> None:
    """The slowest traces of a timeframe with whole hours are drawn from every hour it
    touches, then gathered; a draw that cannot vouch for its page is answered the exact
    way. Timeframes cut into the spans at both ends, and small pages, exercise both."""
    rng = random.Random(22)
    stored = StoredTypes(STORED.paths, {"duration": {}, "kind": {}, "error": {}})
    ways: dict[int, int] = defaultdict(int)  # statements an answer took: how often
    for _ in range(80):
        start = TIMEFRAME.from_ms + rng.choice([-4_000_000, -70_000, 0, 120_000, 1_500_000])
        end = TIMEFRAME.to_ms + rng.choice([-1_000_000, 0, 3_000_000, 4_000_000])
        body = {
            **_random_search(rng),
            "from": start,
            "to": end,
            "dataset": DATASET,
            "orderBy": "duration",
            "limit": rng.choice([1, 2, 3, 5, 8, 20]),
        }
        body.pop("maxDuration", None)
        plan = compile_search(validate_search(body), scope(), query_store.table, stored)
        assert plan is not None
        held: list[CompiledQuery] = []
        answer = plan.answer(_reads_into(query_store, held))["traces"]
        assert answer == reference_search(spans, body), body
        ways[len(held)] += 1
    # Drawn and vouched for (two statements) in most; the crowded draw below shows the
    # exact way taken when it cannot be.
    assert ways[2] >= 20, dict(ways)


def test_a_draw_crowded_by_traces_outside_the_timeframe_is_answered_the_exact_way(
    query_store: Any,
) -> None:
    """Traces slower than any in the timeframe, in the hour it begins in but before it,
    fill the draw: none of them is in the timeframe, so the page is answered the exact
    way. A trace that began before the timeframe lasts only its spans in it."""
    tenant = Tenant(WORKSPACE, "env_spans_crowded")
    hour = (TIMEFRAME.from_ms // HOUR_MS + 1) * HOUR_MS
    rng = random.Random(3)

    def trace(start: int, durations: list[int], service: str = "orders") -> list[dict[str, Any]]:
        trace_id = f"{rng.getrandbits(128):032x}"
        return [
            _span(rng, trace_id, start + i * 1_000, service, kind="SERVER", duration=d)
            for i, d in enumerate(durations)
        ]

    events = [e for i in range(12) for e in trace(hour + 60_000 + i * 10_000, [9_000 + i])]
    # Within the timeframe, from half past the hour: four traces of 1 to 4 s.
    events += [e for i in range(4) for e in trace(hour + 2_000_000 + i * 60_000, [1_000 * (i + 1)])]
    # Begun before the timeframe, with a slow span there and a short one in it.
    events += trace(hour + 1_799_000, [30_000, 500])
    records = ref.store_events(query_store, tenant, DATASET, events)
    end = hour + 3 * HOUR_MS
    body, answer, statements = _slowest_of_orders(
        query_store, tenant.environment_id, hour + 1_800_000, end, 3
    )
    assert [t["duration"] for t in answer] == [4_000, 3_000, 2_000]
    assert answer == reference_search(records, body)
    assert statements == 3  # the draw, its gather (none of the drawn), the exact way
    # From the hour's start, the slow traces are the timeframe's: the draw vouches for
    # its page.
    body, answer, statements = _slowest_of_orders(query_store, tenant.environment_id, hour, end, 2)
    assert answer == reference_search(records, body)
    assert statements == 2
    # Fewer traces than a page last minDuration, and every one drawn lasts at least its
    # own: those left out of the full draw last less, so its page is the answer.
    body, answer, statements = _slowest_of_orders(
        query_store, tenant.environment_id, hour, end, 10, minDuration=9_009
    )
    assert [t["duration"] for t in answer] == [30_000, 9_011, 9_010, 9_009]
    assert answer == reference_search(records, body)
    assert statements == 2


def test_traces_that_last_longer_before_the_timeframe_do_not_take_a_slower_ones_place(
    query_store: Any,
) -> None:
    """Traces begun just before the timeframe with a slow span there are drawn first
    (over the whole hour) and gathered with the little they last in it: the draw cannot
    vouch that no trace left out of it lasts longer, so the page is answered the exact
    way, and the slowest trace of the timeframe heads it."""
    tenant = Tenant(WORKSPACE, "env_spans_straddling")
    hour = (TIMEFRAME.from_ms // HOUR_MS + 1) * HOUR_MS
    frm = hour + 1_800_000
    rng = random.Random(4)
    events = []
    for i in range(8):
        trace_id = f"{rng.getrandbits(128):032x}"
        events += [
            _span(rng, trace_id, frm - 30_000 + i, "orders", kind="SERVER", duration=25_000 + i),
            _span(rng, trace_id, frm + 10 + i, "orders", kind="CLIENT", duration=100),
        ]
    slowest = f"{rng.getrandbits(128):032x}"
    events.append(_span(rng, slowest, frm + 60_000, "orders", kind="SERVER", duration=5_000))
    records = ref.store_events(query_store, tenant, DATASET, events)
    body, answer, statements = _slowest_of_orders(
        query_store, tenant.environment_id, frm, hour + 3 * HOUR_MS, 1
    )
    assert [t["traceId"] for t in answer] == [slowest]
    assert answer == reference_search(records, body)
    assert statements == 3


def test_a_trace_whose_duration_passes_64_bits_is_answered_as_json(query_store: Any) -> None:
    """A span's duration is any number the events hold: a UInt64 of 2**64 - 1 ms (a
    Float64 of 2**64 once read) or a Float64 of 1e300 ms. The answer of
    ``POST /v1/traces/search`` is encoded by ``json_response``: a whole duration
    shaped as a Python int past 64 bits cannot be, and the search fails as a 500."""
    from limelight.runs.spans import search_traces
    from limelight.web.problems import json_response

    tenant = Tenant(WORKSPACE, "env_spans_huge_durations")
    events = [
        {
            "timestamp": TIMEFRAME.from_ms + 1_000 * i,
            "service": "gateway",
            "traceId": f"{i + 1:032x}",
            "spanId": f"{i + 1:016x}",
            "kind": "SERVER",
            "name": "GET /",
            "duration": duration,
        }
        for i, duration in enumerate([2**64 - 1, 1e300])
    ]
    ref.store_events(query_store, tenant, DATASET, events)
    limits = RunLimits.from_settings(Settings(data_dir="/nonexistent"))
    body = {**FRAME, "orderBy": "duration", "limit": 10}
    answer = search_traces(
        query_store, tenant, validate_search(body), limits, time.monotonic() + 60
    )
    assert [t["traceId"] for t in answer["traces"]] == [f"{2:032x}", f"{1:032x}"]
    sent = orjson.loads(json_response(answer).body)
    assert [t["duration"] for t in sent["traces"]] == [1e300, 2.0**64]


def test_a_page_that_fits_the_result_limit_is_not_refused_for_the_traces_drawn_past_it(
    query_store: Any,
) -> None:
    """The exact statement returns ``limit`` whole rows; the gather of a draw returns
    every drawn trace whole (``drawn_count``: 1,255 for a page of 1,000), root name and
    services included, though only the first ``limit`` are answered. Rows of about 5 KB
    (a long root span name) fit the run's result limit (6 MB) a thousand at a time, not
    1,255: the search must answer as the exact statement does, not fail as a 503."""
    from limelight.runs.spans import search_traces

    tenant = Tenant(WORKSPACE, "env_spans_wide_rows")
    hour = (TIMEFRAME.from_ms // HOUR_MS + 1) * HOUR_MS
    events = [
        {
            "timestamp": hour + 1_000 + i,
            "service": "gateway",
            "traceId": f"{i + 1:032x}",
            "spanId": f"{i + 1:016x}",
            "kind": "SERVER",
            "name": f"{i:06d} " + "q" * 5_200,
            "duration": 10_000 + i,
        }
        for i in range(1_300)
    ]
    records = ref.store_events(query_store, tenant, DATASET, events)
    limits = RunLimits.from_settings(Settings(data_dir="/nonexistent"))
    assert limits.max_result_bytes == 6 * 1024 * 1024
    body = {"from": hour, "to": hour + HOUR_MS, "dataset": DATASET}
    body |= {"orderBy": "duration", "limit": 1_000}
    # The exact statement alone (the search before the draw) answers the page.
    scoped = Scope(tenant.workspace_id, tenant.environment_id, limits.run_options())
    plan = compile_search(validate_search(body), scoped, query_store.table, STORED)
    assert plan is not None
    draw = plan.step(plan.search.from_).draw
    assert draw is not None
    exact = query_store.query(draw.exact.sql, draw.exact.params).rows
    assert len(exact) == 1_000
    answer = search_traces(
        query_store, tenant, validate_search(body), limits, time.monotonic() + 60
    )
    assert answer["traces"] == reference_search(records, body)
