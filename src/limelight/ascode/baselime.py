"""Baselime's Observability Reference Language (ORL): a ``.baselime`` folder read as it is.

The folder holds ``index.yml`` (the service) and resource files of ``{id: {type:
query|alert|dashboard, properties}}``, checked as the last CLI that validated
them did (v0.0.79, the schemas of ``src/services/parser``): unknown fields are
refused. Each resource becomes Limelight's: a dashboard a board (widget types
``timeseries``, ``timeseries_bar``, ``statistic``, ``table`` as ``line``,
``bars``, ``number``, ``table``), an alert's ``channels`` its destinations and
its threshold string (``"> 10"``) a threshold. Variables (``{{ name }}``) take
their default; templates, which Baselime's servers kept, are refused.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator

from limelight.ascode.documents import MAX_FILE_BYTES, Document
from limelight.ascode.problems import FolderRefused, Path, Problem
from limelight.ascode.resources import Kind, Resource
from limelight.ascode.schema_check import problems
from limelight.errors import LimelightError
from limelight.times import format_duration

CALCULATION_OPERATORS = (
    "|".join(
        ("COUNT_DISTINCT", "MAX", "MIN", "SUM", "AVG", "MEDIAN", "STDDEV", "VARIANCE"),
    )
    + "|P001|P01|P05|P10|P25|P75|P90|P95|P99|P999"
)
FILTER_OPERATIONS = (
    "=", "!=", ">=", "<=", ">", "<", "LIKE", "NOT_LIKE", "INCLUDES", "DOES_NOT_INCLUDE",
    "MATCH_REGEX", "EXISTS", "DOES_NOT_EXIST", "IN", "NOT_IN", "STARTS_WITH",
)  # fmt: skip
WIDGETS = {"timeseries": "line", "timeseries_bar": "bars", "statistic": "number", "table": "table"}
# The docs' widget views (before widget types): a chart of calculations, or events.
VIEWS = {"calculations": "line", "events": "table", "traces": "table"}
ID = "^[a-zA-Z0-9-_]+$"

_STRINGS = {"type": "array", "items": {"type": "string"}}


def _obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": props,
        "required": list(required),
    }


INDEX_SCHEMA = _obj(
    {
        "version": {"type": ["string", "number"]},
        "service": {"type": "string", "pattern": ID},
        "description": {"type": "string"},
        "provider": {"type": "string"},
        "infrastructure": _obj({"stacks": _STRINGS}),
        "templates": {"type": "array"},
        "variables": {"type": "object"},
    },
    ("version", "service", "provider"),
)
_QUERY = _obj(
    {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "parameters": _obj(
            {
                "datasets": {**_STRINGS, "minItems": 1},
                "calculations": _STRINGS,
                "filters": _STRINGS,
                "filterCombination": {"enum": ["AND", "OR"]},
                "groupBys": {
                    "type": "array",
                    "items": _obj(
                        {
                            "type": {"enum": ["string", "number", "boolean"]},
                            "value": {"type": "string"},
                        },
                        ("value",),
                    ),
                },
                # The docs' form, before groupBys: one grouping with its own order and limit.
                "groupBy": _obj(
                    {
                        "type": {"enum": ["string", "number", "boolean"]},
                        "value": {"type": "string"},
                        "limit": {"type": "integer", "minimum": 1},
                        "orderBy": {"type": "string"},
                        "order": {"enum": ["ASC", "DESC"]},
                    },
                    ("value",),
                ),
                "orderBy": _obj(
                    {"value": {"type": "string"}, "order": {"enum": ["ASC", "DESC"]}}, ("value",)
                ),
                "limit": {"type": "integer", "minimum": 1},
                "needle": _obj(
                    {
                        "value": {"type": "string"},
                        "isRegex": {"type": "boolean"},
                        "matchCase": {"type": "boolean"},
                    },
                    ("value",),
                ),
            },
            ("datasets",),
        ),
    },
    ("parameters",),
)
_ALERT = _obj(
    {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "enabled": {"type": "boolean"},
        "parameters": _obj(
            {
                "query": {"type": "string"},
                "threshold": {"type": "string", "pattern": r"^(=|!=|>|>=|<|<=)\s([-+]?[0-9]*)$"},
                "frequency": {"type": "string"},
                "window": {"type": "string"},
            },
            ("query", "threshold", "window"),
        ),
        "channels": {
            "type": "array",
            "minItems": 1,
            "items": _obj(
                {
                    "type": {"enum": ["slack", "webhook", "email"]},
                    "targets": {**_STRINGS, "minItems": 1},
                    "url": {"type": "string"},  # the docs' webhook form
                },
                ("type",),
            ),
        },
    },
    ("parameters", "channels"),
)
_DASHBOARD = _obj(
    {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "parameters": _obj(
            {
                "widgets": {
                    "type": "array",
                    "items": _obj(
                        {
                            "query": {"type": "string"},
                            "type": {"enum": list(WIDGETS)},
                            "view": {"enum": list(VIEWS)},  # the docs' form, before type
                            "name": {"type": "string"},
                            "description": {"type": "string"},
                        },
                        ("query",),
                    ),
                }
            },
            ("widgets",),
        ),
    },
    ("parameters",),
)
RESOURCES_SCHEMA = {
    "type": "object",
    "propertyNames": {"pattern": ID},
    "additionalProperties": {
        "type": "object",
        "required": ["type", "properties"],
        "properties": {"type": {"enum": ["query", "alert", "dashboard"]}, "properties": {}},
        "additionalProperties": False,
        "allOf": [
            {
                "if": {"properties": {"type": {"const": t}}},
                "then": {"properties": {"properties": s}},
            }
            for t, s in (("query", _QUERY), ("alert", _ALERT), ("dashboard", _DASHBOARD))
        ],
    },
}


@cache
def _validator(which: str) -> Draft202012Validator:
    return Draft202012Validator(INDEX_SCHEMA if which == "index" else RESOURCES_SCHEMA)


_VARIABLE = re.compile(r"\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}")


def variables(index: Document) -> dict[str, str]:
    """Each variable's default (Baselime's per-stage values need a stage; none is chosen here)."""
    found = problems(index, _validator("index"))
    data = index.data if isinstance(index.data, dict) else {}
    if data.get("templates"):
        found.append(
            index.problem(
                ("templates",),
                "templates are downloaded from Baselime's servers; copy their resources "
                "into the folder instead",
            )
        )
    out = {}
    for name, spec in (data.get("variables") or {}).items():
        default = spec.get("default") if isinstance(spec, dict) else spec
        if default is None or isinstance(default, dict | list):
            found.append(index.problem(("variables", name), "needs a default value"))
        else:
            out[name] = str(default)
    if found:
        raise FolderRefused(found)
    return out


def render(name: str, text: str, values: dict[str, str]) -> str:
    """``{{ name }}`` replaced by its value, as the file is read (before YAML): at most
    ``MAX_FILE_BYTES`` once filled in (3,000 uses of a 1 MB value built 3 GB)."""
    found = list(_VARIABLE.finditer(text))
    missing = [m for m in found if m.group(1) not in values]
    if missing:
        # Each line found from the line breaks before it, once (counted again for each
        # variable, 300,000 of them took two minutes).
        breaks = [i for i, c in enumerate(text) if c == "\n"]
        raise FolderRefused(
            [
                Problem(
                    name,
                    bisect_left(breaks, m.start()) + 1,
                    m.group(1),
                    "no such variable in index.yml",
                )  # fmt: skip
                for m in missing
            ]
        )
    size = len(text) + sum(len(values[m.group(1)]) - (m.end() - m.start()) for m in found)
    if size > MAX_FILE_BYTES:
        raise FolderRefused(
            [Problem(name, 1, "", f"larger than {MAX_FILE_BYTES:,} characters with its variables")]
        )
    return _VARIABLE.sub(lambda m: values[m.group(1)], text)


# -- mapping ---------------------------------------------------------------------------------

_CALCULATION = re.compile(
    rf"^(?:COUNT|(?P<op>{CALCULATION_OPERATORS}|COUNT)\((?P<key>[^()]+)\))(?:\s+as\s+(?P<alias>\S+))?$"
)
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_MS_UNITS = {
    "ms": 0.001, "msec": 0.001, "msecs": 0.001, "millisecond": 0.001, "milliseconds": 0.001,
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400, "w": 604800, "week": 604800, "weeks": 604800,
}  # fmt: skip
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([a-zA-Z]*)$")


class BaselimeRefusal(LimelightError):
    """A string of Baselime's (a filter, a calculation, a duration) that cannot be read."""

    def __init__(self, path: Path, message: str) -> None:
        self.path, self.message = path, message


def scalar(text: str) -> Any:
    """A filter's value as Baselime read it: a number, a boolean, else the text."""
    if _NUMBER.match(text):
        number = float(text)
        return (
            int(number)
            if number.is_integer() and "." not in text and "e" not in text.lower()
            else number
        )
    if text in ("true", "false"):
        return text == "true"
    return text


def calculation(text: str, path: Path) -> dict[str, Any]:
    m = _CALCULATION.match(text.strip())
    if not m:
        raise BaselimeRefusal(
            path, "not a calculation: COUNT, or OPERATOR(key), optionally 'as alias'"
        )
    out: dict[str, Any] = {"operator": m.group("op") or "COUNT"}
    if m.group("key"):
        out["key"] = m.group("key").strip()
    if m.group("alias"):
        out["alias"] = m.group("alias")
    return out


def filter_(text: str, path: Path) -> dict[str, Any]:
    key, _, rest = text.strip().partition(" ")
    rest = rest.strip()
    for op in sorted(FILTER_OPERATIONS, key=len, reverse=True):
        if rest == op or rest.startswith(op + " ") or (not op.isalpha() and rest.startswith(op)):
            value = rest[len(op) :].strip()
            break
    else:
        raise BaselimeRefusal(path, "not a filter: 'key OPERATION value', e.g. 'duration > 500'")
    out: dict[str, Any] = {"key": key, "operation": op}
    if op in ("EXISTS", "DOES_NOT_EXIST"):
        if value:
            raise BaselimeRefusal(path, f"{op} takes no value")
        return out
    if not value:
        raise BaselimeRefusal(path, f"{op} needs a value")
    if op in ("IN", "NOT_IN"):
        if value[:1] + value[-1:] not in ("()", "[]"):
            raise BaselimeRefusal(path, f"{op} needs a list: (a,b,c)")
        out["value"] = [scalar(v.strip()) for v in value[1:-1].split(",") if v.strip()]
    else:
        out["value"] = scalar(value)
    return out


def duration(text: str, path: Path) -> str:
    """A duration in Baselime's words (``5mins``, ``1h``, ``2 days``) as Limelight's."""
    m = _DURATION.match(text.strip())
    unit = m.group(2).lower() if m else ""
    if not m or (unit and unit not in _MS_UNITS):
        raise BaselimeRefusal(
            path, "a duration such as 5mins, 1h or 1d (cron expressions are not supported)"
        )
    seconds = float(m.group(1)) * (_MS_UNITS[unit] if unit else 0.001)
    if seconds < 1 or not seconds.is_integer():
        raise BaselimeRefusal(path, "must be a whole number of seconds, at least 1s")
    return format_duration(int(seconds))


def _query(props: dict[str, Any]) -> dict[str, Any]:
    params = props["parameters"]
    at = ("properties", "parameters")
    body: dict[str, Any] = {k: props[k] for k in ("name", "description") if k in props}
    body["namespaces"] = [{"type": "dataset", "value": d} for d in params["datasets"]]
    if "calculations" in params:
        body["calculations"] = [
            calculation(c, (*at, "calculations", i)) for i, c in enumerate(params["calculations"])
        ]
    if "filters" in params:
        body["filters"] = [filter_(f, (*at, "filters", i)) for i, f in enumerate(params["filters"])]
    if "filterCombination" in params:
        body["filter_combination"] = params["filterCombination"]
    if "groupBys" in params:
        body["group_bys"] = [
            {"key": g["value"], **({"type": g["type"]} if "type" in g else {})}
            for g in params["groupBys"]
        ]
    if "groupBy" in params:  # the docs' form
        group = params["groupBy"]
        body["group_bys"] = [
            {"key": group["value"], **({"type": group["type"]} if "type" in group else {})}
        ]
        if "orderBy" in group:
            direction = "ASCENDING" if group.get("order") == "ASC" else "DESCENDING"
            body["orders"] = [{"key": group["orderBy"], "order": direction}]
        if "limit" in group:
            body["limit"] = group["limit"]
    if "orderBy" in params:
        order = params["orderBy"]
        body["orders"] = [
            {
                "key": order["value"],
                "order": "ASCENDING" if order.get("order") == "ASC" else "DESCENDING",
            }
        ]
    for name in ("limit", "needle"):
        if name in params:
            body[name] = params[name]
    return body


def _destinations(channels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, channel in enumerate(channels):
        if "url" in channel and "targets" not in channel and channel["type"] == "webhook":
            out.append({"type": "webhook", "url": channel["url"]})
            continue
        if "targets" not in channel:
            raise BaselimeRefusal(("properties", "channels", i, "targets"), "is required")
        targets = channel["targets"]
        if channel["type"] == "email":
            out.append({"type": "email", "to": targets})
            continue
        for j, target in enumerate(targets):
            if not re.match(r"^https?://", target):
                message = (
                    "a Slack channel name: Limelight posts to a Slack incoming-webhook URL; "
                    "give its URL here"
                    if channel["type"] == "slack"
                    else "a webhook target is an http or https URL"
                )
                raise BaselimeRefusal(("properties", "channels", i, "targets", j), message)
            out.append({"type": channel["type"], "url": target})
    return out


def _alert(rid: str, props: dict[str, Any]) -> dict[str, Any]:
    params = props["parameters"]
    at = ("properties", "parameters")
    operation, _, value = params["threshold"].partition(" ")
    if not value:
        raise BaselimeRefusal((*at, "threshold"), "needs a number after the operation: '> 10'")
    body: dict[str, Any] = {
        "name": props.get("name", rid),
        "query": params["query"],
        "threshold": {"operation": operation, "value": int(value)},
        "window": duration(params["window"], (*at, "window")),
        "destinations": _destinations(props["channels"]),
    }
    if "frequency" in params:
        body["frequency"] = duration(params["frequency"], (*at, "frequency"))
    for name in ("description", "enabled"):
        if name in props:
            body[name] = props[name]
    return body


def _board(rid: str, props: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"name": props.get("name", rid)}
    if "description" in props:
        body["description"] = props["description"]
    body["panels"] = [
        {
            "query": w["query"],
            "visualization": WIDGETS[w["type"]]
            if "type" in w
            else VIEWS[w.get("view", "calculations")],
            **({"title": w["name"]} if "name" in w else {}),
        }
        for w in props["parameters"]["widgets"]
    ]
    return body


# Where a field of Limelight's body was written in a Baselime resource.
_QUERY_FIELDS = {
    "namespaces": "datasets",
    "calculations": "calculations",
    "filters": "filters",
    "filter_combination": "filterCombination",
    "group_bys": "groupBys",
    "orders": "orderBy",
    "limit": "limit",
    "needle": "needle",
}
_ALERT_FIELDS = {
    "query": "query",
    "threshold": "threshold",
    "frequency": "frequency",
    "window": "window",
}


def _origin(kind: Kind) -> Any:
    def origin(path: Path) -> Path:
        head, rest = (path[0], path[1:2]) if path else ("", ())
        if kind == "query" and head in _QUERY_FIELDS:
            return ("properties", "parameters", _QUERY_FIELDS[str(head)], *rest)
        if kind == "alert" and head in _ALERT_FIELDS:
            return ("properties", "parameters", _ALERT_FIELDS[str(head)])
        if kind == "alert" and head == "destinations":
            return ("properties", "channels")
        if kind == "board" and head == "panels":
            return ("properties", "parameters", "widgets", *rest)
        return ("properties", *path[:1])

    return origin


_KINDS: dict[str, Kind] = {"query": "query", "alert": "alert", "dashboard": "board"}


def resources_of(doc: Document) -> list[Resource]:
    found = problems(doc, _validator("resources"))
    if found:
        raise FolderRefused(found)
    out, refused = [], []
    for rid, declared in (doc.data or {}).items():
        kind = _KINDS[declared["type"]]
        props = declared["properties"]
        try:
            body = (
                _query(props)
                if kind == "query"
                else _alert(rid, props)
                if kind == "alert"
                else _board(rid, props)
            )
        except BaselimeRefusal as exc:
            refused.append(doc.problem((rid, *exc.path), exc.message))
            continue
        out.append(Resource(kind, rid, body, doc, (rid,), _origin(kind)))
    if refused:
        raise FolderRefused(refused)
    return out
