"""Folders of resources read without a server: the schema against the query layer's tables,
YAML that could not be read safely, and Baselime's strings mapped to Limelight's fields."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from limelight.alerts.spec import Threshold
from limelight.ascode import baselime
from limelight.ascode.documents import parse
from limelight.ascode.folder import line_problems, read_folder
from limelight.ascode.problems import FolderRefused
from limelight.query.calculations import CALCULATIONS
from limelight.query.operators import OPERATORS
from limelight.schemas import RESOURCES_SCHEMA_FILE

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = json.loads(RESOURCES_SCHEMA_FILE.read_text())


def test_the_schema_lists_the_query_layers_operators_and_calculations() -> None:
    query = SCHEMA["$defs"]["query"]["properties"]
    assert query["calculations"]["items"]["properties"]["operator"]["enum"] == list(CALCULATIONS)
    assert query["filters"]["items"]["properties"]["operation"]["enum"] == list(OPERATORS)
    threshold = SCHEMA["$defs"]["alert"]["properties"]["threshold"]["properties"]["operation"]
    assert threshold["enum"] == list(Threshold.model_fields["operation"].annotation.__args__)


def test_the_examples_validate_against_the_schema() -> None:
    validator = Draft202012Validator(SCHEMA)
    files = sorted((ROOT / "examples").rglob("*.yml"))
    assert files
    for path in files:
        assert not list(validator.iter_errors(parse(str(path), path.read_text()).data)), path
    read_folder(ROOT / "examples" / "checkout")


def refused(text: str) -> str:
    with pytest.raises(FolderRefused) as caught:
        parse("f.yml", text)
    return str(caught.value)


def test_yaml_that_would_expand_without_bound_is_refused() -> None:
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, 8):
        laughs += (
            f"{'abcdefgh'[i]}: &{'abcdefgh'[i]} ["
            + ", ".join(["*" + "abcdefgh"[i - 1]] * 10)
            + "]\n"
        )
    assert "more than 100,000 values" in refused(laughs)
    assert "nested more than 64" in refused("a: &a [*a]\n")


def test_a_key_of_nested_aliases_and_yaml_too_deep_to_compose_are_refused_at_once() -> None:
    """The key's repr expanded every alias (600 bytes: 30 s and 2.9 GB); the composer
    recursed past Python's limit on 600 levels (a traceback)."""
    key = "[&k0 [x, x, x, x, x, x, x, x, x, x]"
    for i in range(1, 8):
        key += f", &k{i} [" + ", ".join([f"*k{i - 1}"] * 10) + "]"
    assert "a key must be text, not a list" in refused(f"queries:\n  ? {key}]\n  : 1\n")
    assert "nested more than 64" in refused("queries:\n  q: " + "[" * 600 + "]" * 600 + "\n")


def test_a_key_declared_twice_is_refused_naming_both_lines() -> None:
    assert refused("queries:\n  a: {}\n  a: {}\n") == (
        "f.yml:3: a: declared twice in one mapping (first on line 2)"
    )


def test_baselime_filters_calculations_and_durations_map_to_limelights() -> None:
    at = ()
    assert baselime.filter_("duration >= 500", at) == {
        "key": "duration", "operation": ">=", "value": 500
    }  # fmt: skip
    assert baselime.filter_("path STARTS_WITH /api", at)["value"] == "/api"
    assert baselime.filter_("userId IN [123, abc]", at)["value"] == [123, "abc"]
    assert baselime.filter_("method EXISTS", at) == {"key": "method", "operation": "EXISTS"}
    assert baselime.calculation("P95(duration) as p95", at) == {
        "operator": "P95", "key": "duration", "alias": "p95"
    }  # fmt: skip
    assert baselime.calculation("COUNT", at) == {"operator": "COUNT"}
    assert [baselime.duration(d, at) for d in ("5mins", "1h", "2 days", "90s")] == [
        "5m", "1h", "2d", "90s"
    ]  # fmt: skip
    with pytest.raises(baselime.BaselimeRefusal):
        baselime.duration("0/10 * ? * MON-FRI *", at)


def test_a_slack_channel_name_is_refused_naming_its_line(tmp_path: Path) -> None:
    folder = tmp_path / ".baselime"
    folder.mkdir()
    (folder / "index.yml").write_text("version: 0.0.79\nservice: s\nprovider: aws\n")
    (folder / "resources.yml").write_text(
        "q:\n  type: query\n  properties:\n    parameters:\n      datasets: [logs]\n"
        "      calculations: [COUNT]\n"
        "a:\n  type: alert\n  properties:\n    parameters:\n      query: !ref q\n"
        "      threshold: '> 1'\n      window: 5mins\n"
        "    channels:\n      - type: slack\n        targets:\n          - checkout-alerts\n"
    )
    with pytest.raises(FolderRefused) as caught:
        read_folder(folder)
    [problem] = caught.value.problems
    assert (problem.line, problem.field) == (17, "a.properties.channels[0].targets[0]")
    assert "Slack incoming-webhook URL" in problem.message


def test_a_sparkline_is_drawn_from_zero_and_merges_neighbours_to_fit() -> None:
    from limelight.cli.terminal import sparkline

    assert sparkline([0, 4, 8, None], 10) == "▁▅█ "
    assert sparkline([3, 3], 10) == "██"
    assert sparkline([0, 0], 10) == "▅▅"
    assert sparkline([1, 9, 2, 2], 2) == "█▃"


def test_a_threshold_no_double_holds_is_refused_not_a_traceback() -> None:
    """YAML's integers are unbounded: float() of 1e400 written out raised OverflowError."""
    with pytest.raises(ValueError, match="at most about 1.8e308"):
        Threshold.model_validate({"operation": ">", "value": 10**400})
    assert Threshold.model_validate({"operation": ">", "value": 10**300}).value == 10**300


def test_an_id_ending_in_a_line_break_is_refused_by_the_plan(tmp_path: Path) -> None:
    """The schema's `$` matched before it: the plan passed and the apply stopped half-way
    when the server refused the id."""
    (tmp_path / "queries.yml").write_text(
        "queries:\n  ok:\n    calculations: [{operator: COUNT}]\n"
        '  "bad\\n":\n    calculations: [{operator: COUNT}]\n'
    )
    with pytest.raises(FolderRefused) as caught:
        read_folder(tmp_path)
    [problem] = caught.value.problems
    assert problem.message == "an id is 1 to 128 letters, digits, - or _"


def test_names_and_titles_the_server_refuses_are_refused_by_the_plan(tmp_path: Path) -> None:
    """They passed the plan, and the apply stopped half-way ("1 of 3 changes applied
    before it") when the server refused the second. As the server, the plan takes a name
    or title the environment already holds unchanged (stored before the rule, pulled)."""
    (tmp_path / "queries.yml").write_text(
        "queries:\n  ok:\n    calculations: [{operator: COUNT}]\n"
        '  bad:\n    name: "bad\\nname"\n    calculations: [{operator: COUNT}]\n'
    )
    (tmp_path / "boards.yml").write_text(
        "boards:\n"
        '  escaped:\n    name: "red\\u001b[31m"\n    panels: [{query: ok}]\n'
        '  titled:\n    panels:\n      - {query: ok}\n      - {query: ok, title: "two\\nlines"}\n'
        '  nel:\n    name: "next\\u0085line"\n'
    )
    folder = read_folder(tmp_path)
    one_line = "must be one line, without control characters"
    boards, queries = str(tmp_path / "boards.yml"), str(tmp_path / "queries.yml")
    problems = line_problems(folder, lambda kind, rid: None)  # all new
    assert [(p.file, p.line, p.field, p.message) for p in problems] == [
        (boards, 3, "boards.escaped.name", one_line),
        (boards, 8, "boards.titled.panels[1].title", one_line),
        (boards, 10, "boards.nel.name", one_line),
        (queries, 5, "queries.bad.name", one_line),
    ]
    held: dict[tuple[str, str], dict[str, Any]] = {
        ("query", "bad"): {"name": "bad\nname"},
        ("board", "nel"): {"name": "next\u0085line", "panels": []},
        ("board", "titled"): {"name": "titled", "panels": [{"title": "two\nlines"}]},
        ("board", "escaped"): {"name": "another", "panels": []},  # renamed: checked
    }
    problems = line_problems(folder, lambda kind, rid: held.get((kind, rid)))
    assert [p.field for p in problems] == ["boards.escaped.name"]
    # A board's other fields are checked as the folder is read.
    (tmp_path / "boards.yml").write_text(f"boards:\n  long:\n    name: {'x' * 257}\n")
    with pytest.raises(FolderRefused) as caught:
        read_folder(tmp_path)
    assert [(p.line, p.field, p.message) for p in caught.value.problems] == [
        (3, "boards.long.name", "a name of 1 to 256 characters is required")
    ]


def test_baselime_variables_are_filled_in_within_the_file_size_and_counted_once() -> None:
    """3,000 uses of a 1 MB value built 3 GB; 300,000 missing variables took two
    minutes, each counting the line breaks before it again (now under a second)."""
    with pytest.raises(FolderRefused, match="larger than 5,000,000 characters"):
        baselime.render("r.yml", "# {{x}}\n" * 3000, {"x": "a" * 1_000_000})
    started = time.perf_counter()
    with pytest.raises(FolderRefused) as caught:
        baselime.render("r.yml", "#{{y}}\n" * 300_000, {})
    assert time.perf_counter() - started < 30
    lines = [p.line for p in caught.value.problems]
    assert lines == list(range(1, 300_001))
    assert baselime.render("r.yml", "a: {{x}}\nb: {{ x }}\n", {"x": "1"}) == "a: 1\nb: 1\n"
