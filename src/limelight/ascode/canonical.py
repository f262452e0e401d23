"""A declared resource and a stored one in the one form they are compared in.

Both go through what the server does with a resource it is sent: a query's
fields through the query layer's validation (defaults filled, unset fields
left out), an alert's durations to their shortest form, its window to its
frequency when unset, its calculation to the query's first when unnamed. A
query is named by its id in the folder (``names``: stored ids to those).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from limelight.alerts.spec import AlertFields, as_written
from limelight.query.calculations import value_name
from limelight.query.spec import fields_to_json, validate_fields
from limelight.times import format_duration, parse_duration

QUERY_SERVICE_FIELDS = ("id", "created_at", "updated_at", "author")
DEFAULT_FREQUENCY = "1m"


def query_form(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A query's writable fields as the server keeps them; ``BadRequest`` naming each bad field."""
    writable = {k: v for k, v in fields.items() if k not in QUERY_SERVICE_FIELDS}
    return fields_to_json(validate_fields(writable))


def calculations_of(query: Mapping[str, Any]) -> list[str]:
    """The names a query's calculations are answered under (``P99(duration)``, an alias)."""
    fields = validate_fields(dict(query))
    return [value_name(c.operator, c.key, c.alias) for c in fields.calculations or []]


def _duration(text: str | None) -> str | None:
    seconds = parse_duration(text) if text else None
    return format_duration(seconds) if seconds else None


def alert_form(
    rid: str, body: Mapping[str, Any], fields: AlertFields, calculations: list[str]
) -> dict[str, Any]:
    """A declared alert (``body``, checked as ``fields``) as the server would keep it."""
    frequency = _duration(fields.frequency) or DEFAULT_FREQUENCY
    assert fields.threshold is not None
    return {
        "name": (fields.name or rid).strip(),
        "description": fields.description or None,
        "query": body["query"],
        "calculation": fields.calculation or (calculations[0] if calculations else None),
        "threshold": {
            "operation": fields.threshold.operation,
            "value": as_written(float(fields.threshold.value)),
        },
        "frequency": frequency,
        "window": _duration(fields.window) or frequency,
        "renotify": _duration(fields.renotify),
        "destinations": [d.model_dump(mode="json") for d in fields.destinations or []],
        "enabled": True if fields.enabled is None else fields.enabled,
    }


def stored_alert_form(alert: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """An alert of the Alerts API in the form of ``alert_form``."""
    return {
        "name": alert["name"],
        "description": alert.get("description") or None,
        "query": names.get(alert["query_id"], alert["query_id"]),
        "calculation": alert["calculation"],
        "threshold": {
            "operation": alert["threshold"]["operation"],
            "value": as_written(float(alert["threshold"]["value"])),
        },
        "frequency": _duration(alert["frequency"]),
        "window": _duration(alert["window"]),
        "renotify": _duration(alert.get("renotify")),
        "destinations": alert["destinations"],
        "enabled": alert["enabled"],
    }


def alert_body(form: Mapping[str, Any], query_id: str) -> dict[str, Any]:
    """What the Alerts API is sent for an alert of this form: every field, so that an update
    also clears what the folder no longer sets."""
    body = {k: v for k, v in form.items() if k != "query"}
    return {**body, "query_id": query_id}


def alert_file_form(form: Mapping[str, Any]) -> dict[str, Any]:
    """An alert as a file declares it: unset and default fields left out."""
    out = {k: v for k, v in form.items() if v is not None}
    if out.get("window") == out.get("frequency"):
        out.pop("window")
    if out.get("frequency") == DEFAULT_FREQUENCY:
        out.pop("frequency")
    if out.get("enabled") is True:
        out.pop("enabled")
    if not out.get("destinations"):
        out.pop("destinations", None)
    return out
