"""A query as the console's forms and addresses hold it, and back.

Each part of a query is a row of form controls whose names repeat, one value
per row in document order (browsers send them so):

| Part | Names | Example |
|---|---|---|
| namespaces | ``nt``, ``nv`` | ``nt=dataset&nv=logs`` |
| calculations | ``co``, ``ck``, ``ca`` (operator, key, alias) | ``co=P99&ck=duration&ca=`` |
| filters | ``fk``, ``fo``, ``fv`` (key, operation, value) | ``fk=status&fo=>=&fv=500`` |
| filter combination | ``fc`` | ``fc=OR`` |
| group-bys | ``g`` | ``g=_service`` |
| orders | ``ok``, ``od`` (key, ASCENDING or DESCENDING) | |
| needle | ``q``, ``qr`` (regex), ``qc`` (match case) | ``q=timeout`` |
| limit | ``limit`` | |

A filter's value is read as JSON when it is one (a number, ``true``, a quoted
string, an array, ``{"key": .., "type": ..}``), else as text, so ``500`` is the
number and ``"500"`` the text. The dict this gives goes through the same
validation as the Queries API's bodies.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from limelight.console.numbers import ascii_whole
from limelight.query.calculations import CALCULATIONS, value_name
from limelight.query.operators import OPERATORS

NO_VALUE_OPERATIONS = ("EXISTS", "DOES_NOT_EXIST")
LIST_OPERATIONS = ("IN", "NOT_IN")
OPERATIONS = tuple(OPERATORS)
CALCULATION_OPERATORS = tuple(CALCULATIONS)


def _column(pairs: Sequence[tuple[str, str]], name: str) -> list[str]:
    return [v for k, v in pairs if k == name]


def _rows(pairs: Sequence[tuple[str, str]], *names: str) -> list[tuple[str, ...]]:
    """The rows of parallel controls, dropping rows left empty."""
    columns = [_column(pairs, n) for n in names]
    width = max((len(c) for c in columns), default=0)
    rows = [tuple(c[i].strip() if i < len(c) else "" for c in columns) for i in range(width)]
    return [r for r in rows if r[0]]


def parse_value(text: str, operation: str) -> Any:
    if operation in NO_VALUE_OPERATIONS:
        return None
    stripped = text.strip()
    if operation in LIST_OPERATIONS and not stripped.startswith("["):
        return stripped  # "a, b": the semantics split it
    try:
        value = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return text
    return text if value is None else value


def format_value(value: Any) -> str:
    """The text a form shows for a filter value; ``parse_value`` reads it back."""
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
        return orjson.dumps(value).decode()  # text that would read as JSON: quoted
    return orjson.dumps(value).decode()


def fields_from_params(pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The query the form's fields describe, unvalidated (see ``validate_fields``)."""
    fields: dict[str, Any] = {}
    if namespaces := [{"type": t, "value": v} for t, v in _rows(pairs, "nt", "nv") if v]:
        fields["namespaces"] = namespaces
    calculations = []
    for operator, key, alias in _rows(pairs, "co", "ck", "ca"):
        calc: dict[str, Any] = {"operator": operator}
        if key:
            calc["key"] = key
        if alias:
            calc["alias"] = alias
        calculations.append(calc)
    if calculations:
        fields["calculations"] = calculations
    filters = []
    for key, operation, value in _rows(pairs, "fk", "fo", "fv"):
        flt: dict[str, Any] = {"key": key, "operation": operation or "="}
        parsed = parse_value(value, flt["operation"])
        if parsed is not None:
            flt["value"] = parsed
        filters.append(flt)
    if filters:
        fields["filters"] = filters
    combination = dict(pairs).get("fc", "").strip()
    if combination and combination != "AND":
        fields["filter_combination"] = combination
    if group_bys := [{"key": g.strip()} for g in _column(pairs, "g") if g.strip()]:
        fields["group_bys"] = group_bys
    orders = [{"key": k, "order": d or "DESCENDING"} for k, d in _rows(pairs, "ok", "od")]
    if orders:
        fields["orders"] = orders
    single = dict(pairs)
    if needle := single.get("q", ""):
        fields["needle"] = {
            "value": needle,
            "isRegex": single.get("qr") == "1",
            "matchCase": single.get("qc") == "1",
        }
    if limit := single.get("limit", "").strip():
        number = ascii_whole(limit, 6)
        fields["limit"] = limit if number is None else number
    return fields


def params_from_fields(fields: dict[str, Any]) -> list[tuple[str, str]]:
    """The address of a query (a saved one opened in the builder); the inverse of
    ``fields_from_params`` for what the console can show."""
    out: list[tuple[str, str]] = []
    for ns in fields.get("namespaces") or []:
        out += [("nt", ns["type"]), ("nv", ns["value"])]
    for calc in fields.get("calculations") or []:
        out += [
            ("co", calc["operator"]),
            ("ck", calc.get("key") or ""),
            ("ca", calc.get("alias") or ""),
        ]
    for flt in fields.get("filters") or []:
        out += [
            ("fk", flt["key"]),
            ("fo", flt["operation"]),
            ("fv", format_value(flt.get("value"))),
        ]
    if fields.get("filter_combination") == "OR":
        out.append(("fc", "OR"))
    out += [("g", g["key"]) for g in fields.get("group_bys") or []]
    for order in fields.get("orders") or []:
        out += [("ok", order["key"]), ("od", order.get("order") or "DESCENDING")]
    if needle := fields.get("needle"):
        out.append(("q", needle["value"]))
        if needle.get("isRegex"):
            out.append(("qr", "1"))
        if needle.get("matchCase"):
            out.append(("qc", "1"))
    if fields.get("limit") is not None:
        out.append(("limit", str(fields["limit"])))
    return out


@dataclass
class FormRows:
    """What the builder's form shows: the query's rows, and one empty row of each part
    (so a part can be added without scripts)."""

    namespaces: list[tuple[str, str]] = field(default_factory=list)
    calculations: list[tuple[str, str, str]] = field(default_factory=list)
    filters: list[tuple[str, str, str]] = field(default_factory=list)
    group_bys: list[str] = field(default_factory=list)
    orders: list[tuple[str, str]] = field(default_factory=list)
    combination: str = "AND"
    needle: str = ""
    needle_regex: bool = False
    needle_case: bool = False
    limit: str = ""

    @classmethod
    def of(cls, pairs: Sequence[tuple[str, str]]) -> FormRows:
        single = dict(pairs)
        return cls(
            namespaces=[(t, v) for t, v in _rows(pairs, "nt", "nv") if v],
            calculations=[(o, k, a) for o, k, a in _rows(pairs, "co", "ck", "ca")],
            filters=[(k, o, v) for k, o, v in _rows(pairs, "fk", "fo", "fv")],
            group_bys=[g.strip() for g in _column(pairs, "g") if g.strip()],
            orders=[(k, d) for k, d in _rows(pairs, "ok", "od")],
            combination=single.get("fc") or "AND",
            needle=single.get("q", ""),
            needle_regex=single.get("qr") == "1",
            needle_case=single.get("qc") == "1",
            limit=single.get("limit", ""),
        )


def value_names(calculations: Iterable[dict[str, Any]]) -> list[str]:
    """The names a query's values are answered under (``COUNT``, ``P99(duration)``, aliases)."""
    return [value_name(c["operator"], c.get("key"), c.get("alias")) for c in calculations]
