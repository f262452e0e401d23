"""OTLP values to plain JSON: any-values, attributes as nested keys, ids, resources.

Shared by the span, log and metric mappers; everything here works on decoded
protobuf messages (JSON bodies are decoded into the same messages first).
"""

from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

SERVICE_NAME = "service.name"
SERVICE_NAMESPACE = "service.namespace"
TRACE_ID_BYTES = 16
SPAN_ID_BYTES = 8


@dataclass(slots=True)
class Group:
    """Events that share one OTLP resource, hence one service and namespace."""

    service: str | None
    namespace: str | None
    events: list[dict[str, Any]] = field(default_factory=list)


class Rejections:
    """Items left out of a request, counted by reason for the partial-success message."""

    def __init__(self, id_rule: str = "") -> None:
        """``id_rule``: how the body's encoding writes ids, named when one is invalid."""
        self.id_rule = id_rule
        self.reasons: Counter[str] = Counter()
        # The same counts by kind (invalid, too_deep, too_large), for the metrics.
        self.kinds: Counter[str] = Counter()

    def add(self, reason: str, count: int = 1, kind: str = "invalid") -> None:
        self.reasons[reason] += count
        self.kinds[kind] += count

    def add_invalid_ids(self, items: str, also: str = "") -> None:
        """One item left out for its ids, the rule of the body's encoding named."""
        rules = "; ".join(r for r in (self.id_rule, also) if r)
        self.add(f"{items} with an invalid trace or span id" + (f" ({rules})" if rules else ""))

    @property
    def count(self) -> int:
        return sum(self.reasons.values())

    def message(self) -> str:
        return "; ".join(f"{n} {reason}" for reason, n in self.reasons.most_common())


def any_value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return value.string_value
    if kind == "int_value":
        return value.int_value
    if kind == "double_value":
        return value.double_value
    if kind == "bool_value":
        return value.bool_value
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        # OTLP's JSON mapping writes bytes as base64; keep the same text here.
        return base64.b64encode(value.bytes_value).decode()
    return None


def _insert(out: dict[str, Any], key: str, value: Any) -> bool:
    """Put ``value`` at the dotted ``key``; False when it collides with another key."""
    parts = key.split(".")
    if "" in parts:
        if key in out:
            return False
        out[key] = value
        return True
    node = out
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            return False
        node = child
    last = parts[-1]
    if last in node:  # another key of the set, or a map's own key, is there already
        return False
    node[last] = value
    return True


def attributes(kvs: Any) -> dict[str, Any]:
    """Attributes as nested keys: ``http.method`` becomes ``{"http": {"method": ...}}``.

    When two keys collide (``a`` and ``a.b`` both set) the set is kept flat
    instead, so that no value is lost; queries address both forms the same way.
    """
    nested: dict[str, Any] = {}
    for kv in kvs:
        if not _insert(nested, kv.key, any_value(kv.value)):
            return {kv.key: any_value(kv.value) for kv in kvs}
    return nested


def find_string(kvs: Any, key: str) -> str | None:
    for kv in kvs:
        if kv.key == key and kv.value.WhichOneof("value") == "string_value":
            text: str = kv.value.string_value.strip()
            return text or None
    return None


def resource_group(resource: Resource) -> tuple[Group, dict[str, Any]]:
    """A group for one resource (service.name, service.namespace) and its attributes."""
    kvs: list[KeyValue] = list(resource.attributes)
    service = find_string(kvs, SERVICE_NAME)
    namespace = find_string(kvs, SERVICE_NAMESPACE) or service
    return Group(service, namespace), attributes(kvs)


def scope_fields(scope: InstrumentationScope) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if scope.name:
        out["name"] = scope.name
    if scope.version:
        out["version"] = scope.version
    if len(scope.attributes):
        out["attributes"] = attributes(scope.attributes)
    return out


def valid_id(value: bytes, size: int) -> bool:
    return len(value) == size and any(value)


def add_context(event: dict[str, Any], resource: dict[str, Any], scope: dict[str, Any]) -> None:
    """Resource and scope go last: they repeat on every event of the group."""
    if resource:
        event["resource"] = resource
    if scope:
        event["scope"] = scope


def ns_to_ms(duration_ns: int) -> float:
    return duration_ns / 1_000_000


def map_resources(
    resources: Iterable[Any],
    scopes_of: Callable[[Any], Iterable[Any]],
    items_of: Callable[[Any], Iterable[Any]],
    events_of: Callable[[Any], Iterable[dict[str, Any]]],
) -> list[Group]:
    """Walk OTLP's resource -> scope -> item nesting, the same for every signal.

    ``events_of`` turns one item (a span, a log record, a metric) into its
    events (none when it is rejected); each gets its resource and scope.
    """
    groups = []
    for entry in resources:
        group, resource = resource_group(entry.resource)
        for scoped in scopes_of(entry):
            scope = scope_fields(scoped.scope)
            for item in items_of(scoped):
                for event in events_of(item):
                    add_context(event, resource, scope)
                    group.events.append(event)
        groups.append(group)
    return groups
