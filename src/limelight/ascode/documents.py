"""YAML files read as plain data with the line of every value, so that each error can name
its line.

PyYAML composes the file's nodes (each with its position) and its safe
constructor makes each scalar; the mappings and sequences are built here from
the nodes, recording the line of each value by its path. Being built here, a
file cannot make them grow without bound: a YAML alias repeats a node without
copying its text, so nested aliases (the "billion laughs") or an alias of a
node inside itself would otherwise expand to more values than memory holds.
Duplicate keys, which YAML forbids and PyYAML silently keeps the last of, are
refused. ``!ref id`` (Baselime's reference to a resource of the folder) reads
as the id.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path as FilePath
from typing import Any

import yaml

from limelight.ascode.problems import FolderRefused, Path, Problem, field_name

MAX_VALUES = 100_000  # in one file; a folder of resources holds a few thousand
MAX_DEPTH = 64
MAX_FILE_BYTES = 5_000_000


class _Loader(yaml.SafeLoader):
    pass


def _ref(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    if not isinstance(node, yaml.ScalarNode):
        raise yaml.constructor.ConstructorError(
            None, None, "!ref takes the id of a resource", node.start_mark
        )
    return str(loader.construct_scalar(node))


_Loader.add_constructor("!ref", _ref)


@dataclass(frozen=True)
class Document:
    """One file's data, and the line (1-based) of each value by its path."""

    name: str
    data: Any
    lines: dict[Path, int]

    def line_of(self, path: Path) -> int:
        """The line of the value at ``path``, else of its nearest enclosing value."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return 1

    def problem(self, path: Path, message: str, field: str | None = None) -> Problem:
        name = field_name(path) if field is None else field
        return Problem(self.name, self.line_of(path), name, message)


class _Builder:
    def __init__(self, name: str, loader: _Loader) -> None:
        self.name = name
        self.loader = loader
        self.lines: dict[Path, int] = {}
        self.count = 0

    def refuse(self, node: yaml.Node, message: str) -> FolderRefused:
        return FolderRefused([Problem(self.name, node.start_mark.line + 1, "", message)])

    def build(self, node: yaml.Node, path: Path) -> Any:
        self.count += 1
        if self.count > MAX_VALUES:
            raise self.refuse(node, f"more than {MAX_VALUES:,} values (aliases included)")
        if len(path) > MAX_DEPTH:
            raise self.refuse(node, f"nested more than {MAX_DEPTH} levels deep")
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            self.loader.flatten_mapping(node)  # YAML's merge keys (<<)
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = self.loader.construct_object(key_node, deep=True)
                if not isinstance(key, str):
                    # Named by its kind: the repr of a key of nested aliases expands each
                    # of them (600 bytes of YAML took 30 s and 2.9 GB).
                    raise self.refuse(key_node, f"a key must be text, not {_kind(key)}")
                if key in out:
                    raise FolderRefused(
                        [
                            Problem(
                                self.name,
                                key_node.start_mark.line + 1,
                                key,
                                f"declared twice in one mapping (first on line "
                                f"{self.lines[(*path, key)]})",
                            )
                        ]
                    )
                self.lines[(*path, key)] = key_node.start_mark.line + 1
                out[key] = self.build(value_node, (*path, key))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        return self.loader.construct_object(node, deep=True)


def _kind(value: Any) -> str:
    kinds = {list: "a list", dict: "a mapping", bool: "a boolean", type(None): "null"}
    return kinds.get(type(value), "a number" if isinstance(value, int | float) else "a value")


def _yaml_problem(name: str, exc: yaml.MarkedYAMLError) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    message = f"not valid YAML: {exc.problem}"
    if exc.context and exc.context_mark and exc.context_mark is not mark:
        message += f" ({exc.context} on line {exc.context_mark.line + 1})"
    return Problem(name, mark.line + 1 if mark else 1, "", message)


def parse(name: str, text: str) -> Document:
    """The document of ``text``; ``FolderRefused`` naming the line of a YAML error."""
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            raise FolderRefused([_yaml_problem(name, exc)]) from None
        except RecursionError:  # the composer recurses: 600 levels passed Python's limit
            raise FolderRefused(
                [Problem(name, 1, "", f"nested more than {MAX_DEPTH} levels deep")]
            ) from None
        if node is None:
            return Document(name, {}, {(): 1})
        builder = _Builder(name, loader)
        try:
            data = builder.build(node, ())
        except yaml.MarkedYAMLError as exc:
            raise FolderRefused([_yaml_problem(name, exc)]) from None
        return Document(name, data, builder.lines)
    finally:
        loader.dispose()


def read(path: FilePath, name: str) -> Document:
    """The file at ``path``, named ``name`` in errors."""
    return parse(name, read_text(path, name))


def read_text(path: FilePath, name: str) -> str:
    """The text of the file at ``path``, at most ``MAX_FILE_BYTES``."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise FolderRefused([Problem(name, 1, "", f"larger than {MAX_FILE_BYTES:,} bytes")])
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise FolderRefused([Problem(name, 1, "", "not UTF-8 text")]) from None
    except OSError as exc:
        raise FolderRefused([Problem(name, 1, "", f"cannot be read: {exc.strerror}")]) from None
    return text
