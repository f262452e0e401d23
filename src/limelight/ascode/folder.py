"""A folder of resources read and checked whole: every file parsed, checked against its
schema, its references resolved and each resource validated as the server would, before
anything is sent. Every problem found is reported at once, each with its file, line and
field.

A folder with ``index.yml`` (or ``index.yaml``) is Baselime's (``baselime``); any
other is Limelight's (``limelight_files``). Hidden files and folders are skipped
(Baselime's ``.templates`` and ``.out`` among them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pydantic

from limelight.alerts.spec import (
    FREQUENCY_RANGE,
    RENOTIFY_RANGE,
    WINDOW_RANGE,
    AlertFields,
)
from limelight.ascode import baselime, documents, limelight_files
from limelight.ascode.canonical import alert_form, calculations_of, query_form
from limelight.ascode.problems import FolderRefused, Problem
from limelight.ascode.resources import Kind, Resource
from limelight.boards import check_lines
from limelight.boards import validate as validate_board
from limelight.errors import BadRequest
from limelight.saved_queries import check_name
from limelight.times import duration_error
from limelight.validation import field_errors

Format = Literal["limelight", "baselime"]
MAX_FILES = 1000


@dataclass(frozen=True)
class Folder:
    format: Format
    resources: dict[tuple[Kind, str], Resource]
    # Each resource as the server would keep it (``canonical``).
    forms: dict[tuple[Kind, str], dict[str, Any]]

    def of(self, kind: Kind) -> list[str]:
        return [rid for k, rid in self.resources if k == kind]


def _files(root: Path) -> list[Path]:
    found = sorted(
        p
        for p in root.rglob("*")
        if p.suffix in (".yml", ".yaml")
        and p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    if len(found) > MAX_FILES:
        raise FolderRefused([Problem(str(root), 1, "", f"more than {MAX_FILES} files")])
    return found


_FIELD = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def field_path(name: str) -> tuple[str | int, ...]:
    """``filters[0].value`` -> ``("filters", 0, "value")``."""
    return tuple(int(i) if i else k for k, i in _FIELD.findall(name))


def _documents(root: Path) -> tuple[Format, list[documents.Document]]:
    index = next((root / n for n in ("index.yml", "index.yaml") if (root / n).is_file()), None)
    problems: list[Problem] = []
    docs = []
    values: dict[str, str] = {}
    if index is not None:
        try:
            values = baselime.variables(documents.read(index, str(index)))
        except FolderRefused as exc:
            problems += exc.problems
    for path in _files(root):
        if path == index:
            continue
        try:
            if index is None:
                docs.append(documents.read(path, str(path)))
            else:
                text = baselime.render(str(path), documents.read_text(path, str(path)), values)
                docs.append(documents.parse(str(path), text))
        except FolderRefused as exc:
            problems += exc.problems
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(Problem(str(path), 1, "", f"cannot be read: {exc}"))
    if problems:
        raise FolderRefused(problems)
    return ("limelight" if index is None else "baselime"), docs


_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


def _declared(fmt: Format, docs: list[documents.Document]) -> dict[tuple[Kind, str], Resource]:
    problems: list[Problem] = []
    out: dict[tuple[Kind, str], Resource] = {}
    for doc in docs:
        try:
            found = (limelight_files if fmt == "limelight" else baselime).resources_of(doc)
        except FolderRefused as exc:
            problems += exc.problems
            continue
        for res in found:
            if not _ID.fullmatch(res.id):  # what the server takes as a managed id
                # The schema's patterns end in `$`, which also matches before a final
                # line break: an id ending in one passed the plan and stopped the apply
                # half-way, where the server refused it.
                problems.append(res.problem((), "an id is 1 to 128 letters, digits, - or _"))
                continue
            first = out.get((res.kind, res.id))
            if first is not None:
                problems.append(
                    res.problem(
                        (),
                        f"the {res.kind} {res.id!r} is also declared in "
                        f"{first.doc.name}:{first.line}",
                    )  # fmt: skip
                )
                continue
            out[(res.kind, res.id)] = res
    if problems:
        raise FolderRefused(problems)
    return out


def _refused(res: Resource, exc: BadRequest) -> list[Problem]:
    return [res.problem(field_path(e["field"]), e["message"]) for e in exc.errors or []]


def _query(res: Resource) -> tuple[dict[str, Any] | None, list[Problem]]:
    try:
        return query_form(res.body), []
    except BadRequest as exc:
        return None, _refused(res, exc)


def _alert(
    res: Resource, queries: dict[str, dict[str, Any] | None]
) -> tuple[dict[str, Any] | None, list[Problem]]:
    ref = res.body["query"]
    if ref not in queries:
        return None, [res.problem(("query",), f"no query {ref!r} is declared in this folder")]
    try:
        fields = AlertFields.model_validate({k: v for k, v in res.body.items() if k != "query"})
    except pydantic.ValidationError as exc:
        errors = field_errors(exc, root="alert")
        return None, [res.problem(field_path(e["field"]), e["message"]) for e in errors]
    problems = []
    for name, bounds in (
        ("frequency", FREQUENCY_RANGE),
        ("window", WINDOW_RANGE),
        ("renotify", RENOTIFY_RANGE),
    ):
        if message := duration_error(getattr(fields, name), bounds):
            problems.append(res.problem((name,), message))
    query = queries[ref]
    if query is None:  # its own problems are reported
        return None, problems
    names = calculations_of(query)
    if not names:
        problems.append(res.problem(("query",), f"the query {ref!r} has no calculation to watch"))
    elif fields.calculation is not None and fields.calculation not in names:
        problems.append(
            res.problem(
                ("calculation",), f"not a calculation of {ref!r}; one of: {', '.join(names)}"
            )
        )
    return (None if problems else alert_form(res.id, res.body, fields, names)), problems


def _board(res: Resource, queries: dict[str, Any]) -> tuple[dict[str, Any] | None, list[Problem]]:
    problems = [
        res.problem(("panels", i, "query"), f"no query {p['query']!r} is declared in this folder")
        for i, p in enumerate(res.body.get("panels", []))
        if p["query"] not in queries
    ]
    problems += _board_fields(res)
    return (None if problems else dict(res.body)), problems


# A panel's query_id for the check: the folder names the query by its own id, and its
# id in the environment is known only once apply has made it (that it is declared in
# the folder is checked apart).
_SOME_QUERY_ID = "q"


def _board_sent(res: Resource) -> dict[str, Any]:
    """The board as the Boards API would be sent it (the plan's name by default)."""
    return {
        **res.body,
        "name": res.body.get("name") or res.id,
        "panels": [
            {**{k: v for k, v in p.items() if k != "query"}, "query_id": _SOME_QUERY_ID}
            for p in res.body.get("panels", [])
        ],
    }


def _board_fields(res: Resource) -> list[Problem]:
    """The board's fields as the Boards API checks them, so that apply is not refused
    half-way (its lines: ``line_problems``)."""
    try:
        validate_board(_board_sent(res))
    except BadRequest as exc:
        return _refused(res, exc)
    return []


def line_problems(
    folder: Folder, stored: Callable[[Kind, str], Mapping[str, Any] | None]
) -> list[Problem]:
    """The names and panel titles the server would refuse as not one line, each with its
    file and line: apply stopped half-way at the first. As the server checks them: those
    new or changed from what the environment holds (``stored``: the resource a folder id
    names there, or None), so a name stored before the rule, pulled into a folder, is
    taken unchanged."""
    problems: list[Problem] = []
    for (kind, rid), res in folder.resources.items():
        before = stored(kind, rid)
        try:
            if kind == "query" and (kind, rid) in folder.forms:
                form = folder.forms[(kind, rid)]
                if before is None or before.get("name") != form.get("name"):
                    check_name(form)
            elif kind == "board":
                check_lines(dict(before) if before else None, validate_board(_board_sent(res)))
        except BadRequest as exc:
            problems += _refused(res, exc)
    return sorted(problems, key=lambda p: (p.file, p.line, p.field))


def read_folder(root: Path) -> Folder:
    """The folder's resources; ``FolderRefused`` listing every problem found."""
    if not root.is_dir():
        raise FolderRefused([Problem(str(root), 1, "", "not a folder")])
    fmt, docs = _documents(root)
    declared = _declared(fmt, docs)
    problems: list[Problem] = []
    forms: dict[tuple[Kind, str], dict[str, Any]] = {}
    queries: dict[str, dict[str, Any] | None] = {}
    for (kind, rid), res in declared.items():
        if kind == "query":
            queries[rid], found = _query(res)
            problems += found
            if queries[rid] is not None:
                forms[(kind, rid)] = queries[rid]  # type: ignore[assignment]
    for (kind, rid), res in declared.items():
        if kind == "query":
            continue
        form, found = _alert(res, queries) if kind == "alert" else _board(res, queries)
        problems += found
        if form is not None:
            forms[(kind, rid)] = form
    if problems:
        raise FolderRefused(sorted(problems, key=lambda p: (p.file, p.line, p.field)))
    return Folder(fmt, declared, forms)
