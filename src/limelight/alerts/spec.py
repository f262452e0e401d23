"""An alert's definition: the fields a client sends, their validation, and durations.

Pydantic checks the shape; the rules that need more (durations in range, the
window not shorter than needed, destinations the policy allows) follow, each
problem an entry of ``BadRequest.errors`` naming the field. Whether the saved
query exists and offers the watched calculation is checked by the service,
which reads the query.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

import pydantic
from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
)

from limelight.alerts.destinations import DestinationPolicy, RefusedDestination
from limelight.errors import BadRequest
from limelight.times import DAY, MINUTE, duration_error
from limelight.validation import Line, field_errors

Operation = Literal[">", ">=", "<", "<=", "=", "!="]
FREQUENCY_RANGE = (MINUTE, DAY)
WINDOW_RANGE = (MINUTE, 7 * DAY)
RENOTIFY_RANGE = (MINUTE, 7 * DAY)
MAX_DESTINATIONS = 20
MAX_RECIPIENTS = 50
_EMAIL = re.compile(r"[^@\s<>,;\"']+@[^@\s<>,;\"']+\.[^@\s<>,;\"'.]+")


def _no_nul(text: str) -> str:
    """PostgreSQL's text cannot hold U+0000: refused here, not a database error."""
    if "\x00" in text:
        raise ValueError("must not contain the character U+0000")
    return text


Text = Annotated[StrictStr, AfterValidator(_no_nul)]


class _Model(pydantic.BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _a_double(value: float) -> float:
    """An integer a double cannot hold (from a resources file: YAML's are unbounded) is
    refused here; ``float()`` of it raised OverflowError, a traceback."""
    try:
        float(value)
    except OverflowError:
        raise ValueError("must be at most about 1.8e308 either way") from None
    return value


class Threshold(_Model):
    operation: Operation
    value: Annotated[
        StrictInt | Annotated[StrictFloat, Field(allow_inf_nan=False)], AfterValidator(_a_double)
    ]


class WebhookDestination(_Model):
    type: Literal["webhook"]
    url: StrictStr


class SlackDestination(_Model):
    type: Literal["slack"]
    url: StrictStr


class EmailDestination(_Model):
    type: Literal["email"]
    to: Annotated[list[StrictStr], Field(min_length=1, max_length=MAX_RECIPIENTS)]


Destination = Annotated[
    WebhookDestination | SlackDestination | EmailDestination, Field(discriminator="type")
]


class AlertFields(_Model):
    """What a client may set. Every field is optional here: the service says which a
    creation needs."""

    name: Annotated[Line, Field(min_length=1, max_length=200)] | None = None
    description: Annotated[Text, Field(max_length=2000)] | None = None
    query_id: Line | None = None
    calculation: Annotated[Line, Field(min_length=1, max_length=256)] | None = None
    threshold: Threshold | None = None
    frequency: StrictStr | None = None
    window: StrictStr | None = None
    destinations: Annotated[list[Destination], Field(max_length=MAX_DESTINATIONS)] | None = None
    enabled: StrictBool | None = None
    renotify: StrictStr | None = None


# What an object of an alert looks like, for the message of a value that is not one.
_EXAMPLES = {"Threshold": '{"operation": ">", "value": 500}'}

_HINTS = {
    "operation": "invalid value; one of >, >=, <, <=, =, !=",
    "type": "invalid value; webhook, slack or email",
}

# Set by the service; ignored when a client sends them.
SERVICE_FIELDS = frozenset(
    {"id", "created_at", "updated_at", "author", "state", "last_checked_at", "webhook_secret"}
)


def _destination_errors(
    destinations: list[Any] | None, policy: DestinationPolicy
) -> list[dict[str, str]]:
    errors = []
    for i, dest in enumerate(destinations or []):
        if isinstance(dest, EmailDestination):
            for j, address in enumerate(dest.to):
                # An encoded word (=?utf-8?q?...?=) is decoded by the message's parser:
                # `=0D=0A` in one wrote headers of the address's own (Bcc) into the mail.
                if not _EMAIL.fullmatch(address) or "=?" in address:
                    errors.append(
                        {"field": f"destinations[{i}].to[{j}]", "message": "not an email address"}
                    )
            continue
        try:
            policy.check_url(dest.url)
        except RefusedDestination as exc:
            errors.append({"field": f"destinations[{i}].url", "message": str(exc)})
    return errors


def validate_alert(data: object, policy: DestinationPolicy) -> AlertFields:
    """Parse an alert body (whole or partial); ``BadRequest`` listing every problem."""
    if not isinstance(data, dict):
        raise BadRequest(
            message="Invalid alert",
            errors=[{"field": "alert", "message": "must be a JSON object"}],
        )
    body = {k: v for k, v in data.items() if k not in SERVICE_FIELDS}
    try:
        fields = AlertFields.model_validate(body)
    except pydantic.ValidationError as exc:
        raise BadRequest(
            message="Invalid alert",
            errors=field_errors(exc, hints=_HINTS, root="alert", examples=_EXAMPLES),
        ) from None
    errors = []
    for name, bounds in (
        ("frequency", FREQUENCY_RANGE),
        ("window", WINDOW_RANGE),
        ("renotify", RENOTIFY_RANGE),
    ):
        if problem := duration_error(getattr(fields, name), bounds):
            errors.append({"field": name, "message": problem})
    if fields.name is not None and not fields.name.strip():
        errors.append({"field": "name", "message": "must not be blank"})
    errors += _destination_errors(fields.destinations, policy)
    if errors:
        raise BadRequest(message="Invalid alert", errors=errors)
    return fields


# The threshold's operations, as a table.
OPERATIONS: Mapping[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "=": operator.eq,
    "!=": operator.ne,
}


def as_written(number: float) -> float | int:
    """500.0 as 500: a threshold as its owner wrote it. Only below 2**53, where a
    double is that integer exactly; a larger one stays a double (as an integer it
    could exceed the 64 bits a JSON encoder takes: 1e20)."""
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


def threshold_crossed(operation: str, value: float, threshold: float) -> bool:
    """Whether ``value`` crosses the threshold; a value that is not a finite number never does."""
    return math.isfinite(value) and OPERATIONS[operation](value, threshold)
