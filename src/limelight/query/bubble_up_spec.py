"""What a BubbleUp asks (``POST /v1/bubble_up``), and its validation.

The events compared are a query's: its ``namespaces`` (datasets among them),
``filters`` and ``needle`` over ``[from, to)``. The ``selection`` is part of them,
given as filters (``{"filters": [...]}``) or as a region of a heatmap
(``{"from", "to", "key", "min", "max"}``: a time range and a range of a number,
both ends of the number included); the baseline is every other event of the query.
Every problem becomes one entry of ``BadRequest.errors`` naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import pydantic
from pydantic import ConfigDict, Field, StrictInt, StrictStr

from limelight.errors import BadRequest
from limelight.query.keys import valid_key
from limelight.query.spec import FiniteFloat, Int64, QueryFields, validate_fields
from limelight.validation import field_errors

# The last millisecond of the year 9999, as the query runs take it.
MAX_UNIX_MS = 253_402_300_799_999
UnixMs = Annotated[StrictInt, Field(ge=0, le=MAX_UNIX_MS)]
# The query fields a BubbleUp takes (the others, calculations and the like, shape a
# run's answer and mean nothing here).
QUERY_FIELDS = ("namespaces", "filters", "filter_combination", "needle")


class _Model(pydantic.BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class BubbleUpBody(_Model):
    namespaces: list[Any] | None = None
    filters: list[Any] | None = None
    filter_combination: Any = None
    needle: Any = None
    from_: UnixMs = Field(alias="from", description="unix milliseconds")
    to: UnixMs = Field(description="unix milliseconds")
    selection: dict[str, Any]


class RegionBody(_Model):
    from_: UnixMs = Field(alias="from", description="unix milliseconds")
    to: UnixMs = Field(description="unix milliseconds")
    key: StrictStr
    min: Int64 | FiniteFloat
    max: Int64 | FiniteFloat


@dataclass(frozen=True)
class Region:
    """Events in ``[from_ms, to_ms)`` whose ``key`` holds a number within ``[low, high]``."""

    from_ms: int
    to_ms: int
    key: str
    low: float
    high: float


Selection = QueryFields | Region  # the selection's filters (and their combination), or a region


@dataclass(frozen=True)
class BubbleUpRequest:
    fields: QueryFields  # the query: namespaces, filters, needle
    from_ms: int
    to_ms: int
    selection: Selection

    def selection_keys(self) -> set[str]:
        """The keys the selection is defined by: left out of the comparison."""
        if isinstance(self.selection, Region):
            return {self.selection.key}
        return {f.key for f in self.selection.filters or []}


def _bad(errors: list[dict[str, str]]) -> BadRequest:
    return BadRequest(message="Invalid BubbleUp", errors=errors)


def _prefixed(exc: BadRequest, prefix: str) -> BadRequest:
    errors = [
        {**e, "field": prefix + e["field"] if e["field"] != "query" else prefix[:-1]}
        for e in exc.errors or []
    ]
    return _bad(errors)


def _selection(data: dict[str, Any]) -> Selection:
    if "filters" in data:
        unknown = sorted(set(data) - {"filters", "filter_combination"})
        if unknown:
            raise _bad([{"field": f"selection.{unknown[0]}", "message": "unknown field"}])
        if not isinstance(data["filters"], list) or not data["filters"]:
            raise _bad([{"field": "selection.filters", "message": "must be a non-empty array"}])
        try:
            return validate_fields(data)
        except BadRequest as exc:
            raise _prefixed(exc, "selection.") from None
    try:
        region = RegionBody.model_validate(data)
    except pydantic.ValidationError as exc:
        errors = field_errors(exc, prefix="selection", root="selection")
        if not data:
            errors = [
                {
                    "field": "selection",
                    "message": 'needs "filters", or a region: "from", "to", "key", "min", "max"',
                }
            ]
        raise _bad(errors) from None
    problems = []
    if region.from_ > region.to:
        problems.append({"field": "selection.from", "message": "must not be after 'to'"})
    if region.min > region.max:
        problems.append({"field": "selection.min", "message": "must not be above 'max'"})
    if problem := valid_key(region.key):
        problems.append({"field": "selection.key", "message": problem})
    if problems:
        raise _bad(problems)
    return Region(region.from_, region.to, region.key, float(region.min), float(region.max))


def validate_bubble_up(body: bytes) -> BubbleUpRequest:
    """Parse a BubbleUp body; raise ``BadRequest`` naming each bad field."""
    try:
        parsed = BubbleUpBody.model_validate_json(body or b"{}")
    except pydantic.ValidationError as exc:
        raise _bad(field_errors(exc)) from None
    query = {name: getattr(parsed, name) for name in QUERY_FIELDS}
    try:
        fields = validate_fields({k: v for k, v in query.items() if v is not None})
    except BadRequest as exc:
        raise _bad(exc.errors or []) from None
    return BubbleUpRequest(fields, parsed.from_, parsed.to, _selection(parsed.selection))
