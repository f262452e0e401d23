"""A document checked against a JSON Schema, each error one ``Problem`` with its line and
field, in words (jsonschema's own messages repeat whole values and lists)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from limelight.ascode.documents import Document
from limelight.ascode.problems import Path, Problem

_TYPES = {
    "object": "a mapping",
    "array": "a list",
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
}


def _listed(values: Any) -> str:
    return ", ".join(str(v) for v in values)


def _described(error: ValidationError) -> Iterator[tuple[Path, str]]:
    """(path, message) for one error: its own words for the keywords the schemas use."""
    path: Path = tuple(error.absolute_path)
    # jsonschema's stubs allow "unset" for errors made by hand; these come from validation.
    kind, expected, instance = (
        str(error.validator),
        cast(Any, error.validator_value),
        cast(Any, error.instance),
    )
    schema = cast(dict[str, Any], error.schema)
    if kind == "required":
        for name in expected:
            if name not in instance:
                yield (*path, name), "is required"
    elif kind == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        for name in instance:
            if name not in allowed:
                yield (*path, name), f"unknown field; allowed: {_listed(allowed)}"
    elif "propertyNames" in error.schema_path:  # the value is the key itself
        yield (*path, str(instance)), "an id is 1 to 128 letters, digits, '-' or '_'"
    elif kind == "enum":
        yield path, f"{instance!r} is not allowed; one of: {_listed(expected)}"
    elif kind == "const":
        yield path, f"must be {expected}"
    elif kind == "type":
        wanted = expected if isinstance(expected, list) else [expected]
        yield path, "must be " + " or ".join(_TYPES.get(str(t), str(t)) for t in wanted)
    elif kind == "oneOf":
        yield from _one_of(error)
    elif kind in ("minimum", "maximum"):
        yield path, f"must be at {'least' if kind == 'minimum' else 'most'} {expected}"
    elif kind in ("minLength", "minItems"):
        yield path, "must not be empty" if expected == 1 else f"needs at least {expected}"
    elif kind in ("maxLength", "maxItems"):
        yield path, f"at most {expected} {'characters' if kind == 'maxLength' else 'items'}"
    elif kind == "pattern" and "[smhd]" in str(expected):
        yield path, 'a duration such as "30s", "5m", "1h" or "1d"'
    elif kind == "pattern" and str(expected).startswith("^https?"):
        yield path, "an http or https URL"
    else:
        yield path, error.message


def _one_of(error: ValidationError) -> Iterator[tuple[Path, str]]:
    """A value that fits no branch: the errors of the branch its ``type`` names."""
    branches: dict[int, list[ValidationError]] = {}
    for sub in error.context or []:
        branches.setdefault(int(sub.schema_path[0]), []).append(sub)
    for subs in branches.values():
        if not any(s.validator == "const" for s in subs):
            for sub in subs:
                yield from _described(sub)
            return
    types = [b["properties"]["type"]["const"] for b in cast(list[Any], error.validator_value)]
    yield (*tuple(error.absolute_path), "type"), f"must be one of: {_listed(types)}"


def problems(doc: Document, validator: Draft202012Validator) -> list[Problem]:
    found = []
    for error in validator.iter_errors(doc.data):
        for path, message in _described(error):
            found.append(doc.problem(path, message))
    return sorted(set(found), key=lambda p: (p.line, p.field))
