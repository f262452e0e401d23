"""The query definition: what a saved query holds, and its validation.

Parsing has two steps. Pydantic checks the shape (field names and JSON types);
``_check_meaning`` then checks the rules that need the operator and calculation
tables (allowed names, which operators take which values, unique names, orders
that name a group or a calculation). Every problem becomes one entry of
``BadRequest.errors`` naming the field, e.g. ``filters[0].operation``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pydantic
from pydantic import ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

from limelight.errors import BadRequest
from limelight.query.calculations import CALCULATIONS, value_name
from limelight.query.keys import valid_key
from limelight.query.operators import ENGINE_INTEGERS, OPERATORS
from limelight.validation import field_errors

KeyType = Literal["string", "number", "boolean"]
# Numbers are compared as ClickHouse Int64, UInt64 or Float64; infinities cannot be bound
# and are refused here, with the field named.
Int64 = Annotated[StrictInt, Field(ge=-(2**63), le=2**63 - 1)]
FiniteFloat = Annotated[StrictFloat, Field(allow_inf_nan=False)]
# A filter's integer: any the engine stores as one (Int64, or UInt64 up to 2**64 - 1),
# compared exactly (``operators.beyond_float``). A larger one is read as the float it
# is, as the engine stores it.
FilterInteger = Annotated[StrictInt, Field(ge=ENGINE_INTEGERS.start, le=ENGINE_INTEGERS.stop - 1)]
Scalar = StrictBool | FilterInteger | FiniteFloat | StrictStr
MAX_LIMIT = 10_000
# At most this many namespaces, keys, calculations, filters, group-bys or orders in one
# query. The engine's time to plan a statement grows faster than its items: measured on
# chDB over a single event, 100 filters 0.35 s and 200 0.7 s, 200 group-bys 1.5 s, the
# events read with 200 filters 2.9 s; around 2,000 filters a statement outgrows what the
# engine parses at all (``scope.MAX_STATEMENT_BYTES``, which bounds the rest: the
# values of an IN, the length of the keys).
MAX_ITEMS = 100


class _Model(pydantic.BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Namespace(_Model):
    type: StrictStr
    value: StrictStr


class KeySpec(_Model):
    key: StrictStr
    type: KeyType | None = None


class KeyRef(_Model):
    """A filter value that names another key of the same event."""

    key: StrictStr
    type: KeyType | None = None


class Calculation(_Model):
    operator: StrictStr
    key: StrictStr | None = None
    alias: StrictStr | None = None


class Filter(_Model):
    key: StrictStr
    operation: StrictStr
    value: Scalar | list[Scalar] | KeyRef | None = None


class Order(_Model):
    key: StrictStr
    type: KeyType | None = None
    order: Literal["ASCENDING", "DESCENDING"] = "DESCENDING"


class Needle(_Model):
    value: StrictStr
    isRegex: StrictBool = False  # noqa: N815 - the API's spelling
    matchCase: StrictBool = False  # noqa: N815 - the API's spelling


class QueryFields(_Model):
    """The writable fields of a query; ``None`` means not set."""

    namespaces: list[Namespace] | None = Field(None, max_length=MAX_ITEMS)
    keys: list[KeySpec] | None = Field(None, max_length=MAX_ITEMS)
    calculations: list[Calculation] | None = Field(None, max_length=MAX_ITEMS)
    filters: list[Filter] | None = Field(None, max_length=MAX_ITEMS)
    filter_combination: Literal["AND", "OR"] | None = None
    group_bys: list[KeySpec] | None = Field(None, max_length=MAX_ITEMS)
    orders: list[Order] | None = Field(None, max_length=MAX_ITEMS)
    needle: Needle | None = None
    limit: StrictInt | None = None
    name: StrictStr | None = None
    description: StrictStr | None = None


# What each object of a query looks like, for the message of a value that is not an object
# (pydantic would name the class: "a valid dictionary or instance of KeySpec").
OBJECT_EXAMPLES = {
    "Namespace": '{"type": "service", "value": "checkout"}',
    "KeySpec": '{"key": "data.userId"} (and optionally "type": string, number or boolean)',
    "Calculation": '{"operator": "P99", "key": "duration"} (and optionally "alias")',
    "Filter": '{"key": "duration", "operation": ">", "value": 100}',
    "Order": '{"key": "P99(duration)", "order": "DESCENDING"}',
    "Needle": '{"value": "timeout", "isRegex": false, "matchCase": false}',
}

_SHAPE_HINTS = {
    "filter_combination": "invalid value; allowed: AND, OR",
    "order": "invalid value; allowed: ASCENDING, DESCENDING",
    "type": "invalid value; allowed: string, number, boolean",
    "filters.value": "must be a string, number, boolean, an array of them, or {key, type}",
}


def _check_filter(i: int, flt: Filter) -> list[dict[str, str]]:
    where = f"filters[{i}]"
    op = OPERATORS.get(flt.operation)
    if op is None:
        allowed = ", ".join(OPERATORS)
        return [
            {"field": f"{where}.operation", "message": f"unknown operation; allowed: {allowed}"}
        ]
    problem = op.check_value(flt.value)
    return [{"field": f"{where}.value", "message": problem}] if problem else []


def filter_errors(filters: list[Filter]) -> list[dict[str, str]]:
    """What is wrong with ``filters`` (``filters[i].operation``, ``.value``, ``.key``), for
    the other reads that take the query runs' filters (trace search)."""
    errors: list[dict[str, str]] = []
    for i, flt in enumerate(filters):
        errors += _check_filter(i, flt)
        keys = [("key", flt.key)]
        if isinstance(flt.value, KeyRef):
            keys.append(("value.key", flt.value.key))
        errors += [
            {"field": f"filters[{i}].{field}", "message": problem}
            for field, key in keys
            if (problem := valid_key(key))
        ]
    return errors


def _check_calculations(calcs: list[Calculation]) -> tuple[list[dict[str, str]], set[str]]:
    errors: list[dict[str, str]] = []
    names: set[str] = set()
    for i, calc in enumerate(calcs):
        where = f"calculations[{i}]"
        spec = CALCULATIONS.get(calc.operator)
        if spec is None:
            allowed = ", ".join(CALCULATIONS)
            errors.append(
                {"field": f"{where}.operator", "message": f"unknown operator; allowed: {allowed}"}
            )
            continue
        if spec.needs_key and not calc.key:
            errors.append({"field": f"{where}.key", "message": f"{calc.operator} needs a key"})
            continue
        if spec.heatmap and any(
            CALCULATIONS[c.operator].heatmap for c in calcs[:i] if c.operator in CALCULATIONS
        ):
            errors.append({"field": f"{where}.operator", "message": "one HEATMAP per query"})
            continue
        name = value_name(calc.operator, calc.key, calc.alias)
        if name in names or name == "_count":
            field = f"{where}.alias" if calc.alias else where
            errors.append({"field": field, "message": f"the value name {name!r} is used twice"})
        names.add(name)
    return errors, names


def _named_keys(fields: QueryFields) -> list[tuple[str, str]]:
    """(field path, key) for every key name the query uses."""
    out = [(f"keys[{i}].key", k.key) for i, k in enumerate(fields.keys or [])]
    out += [(f"group_bys[{i}].key", k.key) for i, k in enumerate(fields.group_bys or [])]
    for i, flt in enumerate(fields.filters or []):
        out.append((f"filters[{i}].key", flt.key))
        if isinstance(flt.value, KeyRef):
            out.append((f"filters[{i}].value.key", flt.value.key))
    for i, calc in enumerate(fields.calculations or []):
        if calc.key is not None:
            out.append((f"calculations[{i}].key", calc.key))
    return out


def _check_meaning(fields: QueryFields) -> list[dict[str, str]]:
    errors: list[dict[str, str]] = []
    if fields.calculations and fields.keys:
        errors.append(
            {"field": "calculations", "message": "calculations and keys cannot be used together"}
        )
    for i, flt in enumerate(fields.filters or []):
        errors += _check_filter(i, flt)
    calc_errors, names = _check_calculations(fields.calculations or [])
    errors += calc_errors
    for field, key in _named_keys(fields):
        problem = valid_key(key)
        if problem:
            errors.append({"field": field, "message": problem})
    groups = {g.key for g in fields.group_bys or []}
    if not fields.calculations:
        names = {"COUNT"} if fields.group_bys else set()  # group_bys alone count per group
    for i, order in enumerate(fields.orders or []):
        if order.key not in groups and order.key not in names:
            allowed = ", ".join(sorted(groups | names)) or "nothing (no group_bys or calculations)"
            errors.append(
                {
                    "field": f"orders[{i}].key",
                    "message": f"must name a group-by key or a calculation; allowed: {allowed}",
                }
            )
    if fields.limit is not None and not 1 <= fields.limit <= MAX_LIMIT:
        errors.append({"field": "limit", "message": f"must be between 1 and {MAX_LIMIT}"})
    if fields.needle is not None and not fields.needle.value:
        errors.append({"field": "needle.value", "message": "must not be empty"})
    return errors


def validate_fields(data: object) -> QueryFields:
    """Parse a query body; raise ``BadRequest`` listing every problem found."""
    if not isinstance(data, dict):
        raise BadRequest(
            message="Invalid query",
            errors=[{"field": "query", "message": "must be a JSON object"}],
        )
    try:
        fields = QueryFields.model_validate(data)
    except pydantic.ValidationError as exc:
        errors = field_errors(exc, hints=_SHAPE_HINTS, examples=OBJECT_EXAMPLES, root="query")
        raise BadRequest(message="Invalid query", errors=errors) from None
    errors = _check_meaning(fields)
    if errors:
        raise BadRequest(message="Invalid query", errors=errors)
    return fields


def fields_to_json(fields: QueryFields) -> dict[str, Any]:
    """The stored and returned form: only the fields that are set."""
    return fields.model_dump(mode="json", exclude_none=True)
