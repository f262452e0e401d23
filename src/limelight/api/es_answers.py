"""What Elasticsearch's clients ask before and around a bulk request, answered so that
they send without special settings: the root (the version they check), the licence,
the cluster's health, and the index templates and lifecycle policies they would set up
(answered as already there: Limelight has no mappings to install). Also
``filter_path``, the response filter Filebeat and Logstash put on every bulk request.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

# What clients accept: Logstash wants 7.0 or later with the X-Elastic-Product header,
# Filebeat 8 and 9 send to any version of 8 and later (allow_older_versions), the Python
# client of 8 and 9 checks the header alone.
VERSION = "8.17.0"
PRODUCT_HEADERS = {"X-Elastic-Product": "Elasticsearch"}
CLUSTER = "limelight"

ROOT: dict[str, Any] = {
    "name": CLUSTER,
    "cluster_name": CLUSTER,
    "cluster_uuid": "limelight",
    "version": {
        "number": VERSION,
        "build_flavor": "default",
        "build_type": "limelight",
        "lucene_version": "9.12.0",
        "minimum_wire_compatibility_version": "7.17.0",
        "minimum_index_compatibility_version": "7.0.0",
    },
    "tagline": "You Know, for Search",
}

LICENSE: dict[str, Any] = {
    "license": {
        "status": "active",
        "uid": "limelight",
        "type": "basic",
        "issue_date": "2026-01-01T00:00:00.000Z",
        "issue_date_in_millis": 1_767_225_600_000,
        "max_nodes": 1000,
        "max_resource_units": None,
        "issued_to": CLUSTER,
        "issuer": "limelight",
        "start_date_in_millis": -1,
    }
}

CLUSTER_HEALTH: dict[str, Any] = {
    "cluster_name": CLUSTER,
    "status": "green",
    "timed_out": False,
    "number_of_nodes": 1,
    "number_of_data_nodes": 1,
    "active_primary_shards": 0,
    "active_shards": 0,
    "relocating_shards": 0,
    "initializing_shards": 0,
    "unassigned_shards": 0,
    "delayed_unassigned_shards": 0,
    "number_of_pending_tasks": 0,
    "number_of_in_flight_fetch": 0,
    "task_max_waiting_in_queue_millis": 0,
    "active_shards_percent_as_number": 100.0,
}


def cat_health(epoch_s: int, as_json: bool) -> Any:
    """``GET /_cat/health``: one row, as text or (``?format=json``) as JSON."""
    row = {"epoch": str(epoch_s), "cluster": CLUSTER, "status": "green", "node.total": "1"}
    if as_json:
        return [row]
    return f"{epoch_s} {CLUSTER} green 1\n"


# Set-up calls of Filebeat and Logstash, by the path's first segments; each answers as
# if what it asks for were in place (a GET gets what the client reads of it).
SETUP_KINDS = ("_index_template", "_template", "_component_template", "_ilm", "_ingest")


def setup_answer(parts: list[str], method: str) -> Any:
    """The answer to a template, lifecycle policy or pipeline call (``parts`` is the path)."""
    if method in ("PUT", "POST", "DELETE"):
        return {"acknowledged": True}
    name = parts[-1]
    kind = parts[0]
    if kind == "_index_template":
        template = {"index_patterns": [f"{name}*"], "template": {}, "composed_of": []}
        return {"index_templates": [{"name": name, "index_template": template}]}
    if kind == "_component_template":
        return {"component_templates": [{"name": name, "component_template": {"template": {}}}]}
    if kind == "_ilm":
        return {name: {"version": 1, "modified_date": "2026-01-01T00:00:00.000Z",
                       "policy": {"phases": {}}}}  # fmt: skip
    if kind == "_template":
        return {name: {"order": 0, "index_patterns": [f"{name}*"], "settings": {},
                       "mappings": {}, "aliases": {}}}  # fmt: skip
    return {name: {"description": "", "processors": []}}  # an ingest pipeline


# ------------------------------------------------------------------ filter_path

_MISSING = object()
_WILDCARDS = frozenset("*?[")


def filter_path(value: Any, spec: str) -> Any:
    """``value`` with only the parts that ``spec`` names, as Elasticsearch's
    ``filter_path`` keeps them: comma-separated dotted paths, ``*`` in a name for any
    characters, ``**`` for any number of levels, arrays filtered element by element,
    and what is left empty dropped. ``-`` before a path excludes it instead."""
    paths = [p.strip() for p in spec.split(",") if p.strip()]
    includes = [tuple(p.split(".")) for p in paths if not p.startswith("-")]
    excludes = [tuple(p[1:].split(".")) for p in paths if p.startswith("-") and len(p) > 1]
    if includes:
        value = _keep(value, includes)
        if value is _MISSING:
            return {}
    if excludes:
        value = _drop(value, excludes)
    return value


def _name_matches(segment: str, key: str) -> bool:
    if segment == "*":
        return True
    if _WILDCARDS.isdisjoint(segment):
        return segment == key
    return fnmatchcase(key, segment)


def _following(paths: list[tuple[str, ...]], key: str) -> list[tuple[str, ...]]:
    """What is left of each path below ``key`` (an empty path: everything below)."""
    out = []
    for path in paths:
        if path[0] == "**":
            out.append(path)  # ** goes on through this level ...
            if len(path) > 1 and _name_matches(path[1], key):
                out.append(path[2:])  # ... or stops above it
        elif _name_matches(path[0], key):
            out.append(path[1:])
    return out


def _keep(value: Any, paths: list[tuple[str, ...]]) -> Any:
    if any(not p or p == ("**",) for p in paths):
        return value
    if isinstance(value, list):
        kept = [k for k in (_keep(v, paths) for v in value) if k is not _MISSING]
        return kept or _MISSING
    if not isinstance(value, dict):
        return _MISSING
    out = {}
    for key, inner in value.items():
        below = _following(paths, key)
        if below:
            kept = _keep(inner, below)
            if kept is not _MISSING:
                out[key] = kept
    return out or _MISSING


def _drop(value: Any, paths: list[tuple[str, ...]]) -> Any:
    if isinstance(value, list):
        return [_drop(v, paths) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, inner in value.items():
        below = _following(paths, key)
        if any(not p for p in below):
            continue
        out[key] = _drop(inner, below) if below else inner
    return out
