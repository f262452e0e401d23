"""Every 503 carries Retry-After: the places in the code that can answer one, each with
the test that provokes it, and the one rule every ``Unavailable`` and framework 503
follows."""

from __future__ import annotations

import ast
import asyncio
from collections import Counter
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from starlette.exceptions import HTTPException

import limelight
from limelight.errors import Unavailable
from limelight.web.problems import error_response, install_error_handlers

SOURCE = Path(limelight.__file__).parent

# (module, what answers 503 there): how many such places, and where each is provoked.
PROVOKED = {
    ("datasets.py", "Unavailable"): (
        2,
        "tests/e2e/test_unavailable.py::test_the_datasets_api_answers_503_with_retry_after_"
        "when_the_engine_refuses (listing and keys)",
    ),
    ("runs/scheduler.py", "Unavailable"): (
        1,
        "tests/integration/test_run_queue_refusals_chdb.py (each of the three reasons)",
    ),
    ("api/otel.py", "Unavailable"): (
        1,
        "tests/e2e/test_otel_http.py::test_load_is_shed_with_retry_after_and_the_sdk_retries, "
        "tests/e2e/test_slow_clients.py::test_one_workspace_cannot_take_every_otlp_slot",
    ),
    ("runs/service.py", "Unavailable"): (
        1,
        "tests/integration/test_span_reads_unavailable_chdb.py::test_a_read_that_waits_past_"
        "the_queue_limit_is_refused_with_retry_after",
    ),
    ("runs/reads.py", "Unavailable"): (
        3,
        "tests/integration/test_span_reads_unavailable_chdb.py::test_a_read_past_its_deadline_"
        "or_refused_by_the_engine_answers_503 and ::test_field_values_past_their_deadline_or_"
        "refused_by_the_engine_answer_503 (the deadline, the engine refusing the types' "
        "lookup, a refused statement)",
    ),
    ("runs/waiting.py", "Unavailable"): (
        1,
        "a read whose job was dropped (the server stopping): an Unavailable, whose Retry-After "
        "test_every_unavailable_says_when_to_retry pins",
    ),
    ("cli/querying.py", "503"): (1, "the CLI reading a server's 503 (tail retries), not an answer"),
    ("cli/sending.py", "503"): (1, "the CLI reading a server's 503 (send retries), not an answer"),
    ("ingest/hec.py", "503"): (1, "Splunk's answer code for a busy server (BUSY), not an answer"),
    ("api/hec.py", "503"): (
        1,
        "an Unavailable in Splunk's form (hec_error) keeps its headers: its Retry-After, which "
        "test_every_unavailable_says_when_to_retry pins",
    ),
    ("api/otel.py", "503"): (1, "the gRPC code of a 503 (GRPC_CODES), not an answer"),
    ("store/events/buffered.py", "Unavailable"): (
        2,
        "tests/integration/test_buffered_inserts_chdb.py (past each bound; a read whose "
        "tenant's events are not in the engine in time), tests/e2e/test_ingest_buffer.py",
    ),
    ("errors.py", "503"): (1, "Unavailable.status: test_every_unavailable_says_when_to_retry"),
    ("web/problems.py", "Unavailable"): (
        1,
        "the framework's 503s: test_a_framework_503_says_when_to_retry",
    ),
    ("http_server.py", "503"): (
        2,
        "tests/e2e/test_unavailable.py: a connection past the cap (AT_CAPACITY) and a request "
        "past the concurrency limit (over_concurrency)",
    ),
}


def _is_503(value: object) -> bool:
    """The status as a number, or in a response head written as bytes."""
    if isinstance(value, bytes):
        return b" 503 " in value
    return isinstance(value, int) and not isinstance(value, bool) and value == 503


def _places(tree: ast.AST) -> list[str]:
    """What in a module can make a 503: ``Unavailable(...)``, a framework HTTPException, the
    number 503 in code, a response head written as bytes."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
            name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            if name == "Unavailable":
                found.append("Unavailable")
            elif name.endswith("HTTPException"):
                found.append("HTTPException")
        elif isinstance(node, ast.Constant) and _is_503(node.value):
            found.append("503")
        elif isinstance(node, ast.Name) and node.id == "service_unavailable":
            found.append("uvicorn's service_unavailable")
    return found


def test_every_place_that_answers_503_is_provoked_by_a_test() -> None:
    found: Counter[tuple[str, str]] = Counter()
    for module in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(module.read_text(), str(module))
        for kind in _places(tree):
            found[(module.relative_to(SOURCE).as_posix(), kind)] += 1
    expected = {place: count for place, (count, _) in PROVOKED.items()}
    assert dict(found) == expected, (
        "a place that answers 503 was added or removed: make it say when to retry "
        "(Unavailable does), provoke it in a test and list it in PROVOKED"
    )


@pytest.mark.parametrize(
    ("error", "header"),
    [
        (Unavailable(), "1"),
        (Unavailable("the engine is busy"), "1"),
        (Unavailable("queue full", retry_after=0), "1"),
        (Unavailable("restarting", retry_after=30), "30"),
    ],
)
def test_every_unavailable_says_when_to_retry(error: Unavailable, header: str) -> None:
    answer = error_response(error)
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == header


def test_a_framework_503_says_when_to_retry() -> None:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/plain")
    def plain() -> None:
        raise HTTPException(503)

    @app.get("/told")
    def told() -> None:
        raise HTTPException(503, headers={"retry-after": "9"})

    async def answers() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
            return [await client.get("/plain"), await client.get("/told")]

    plain_answer, told_answer = asyncio.run(answers())
    assert plain_answer.status_code == told_answer.status_code == 503
    assert plain_answer.headers["retry-after"] == "1"
    assert told_answer.headers["retry-after"] == "9"
