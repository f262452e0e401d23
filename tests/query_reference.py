"""An independent, plain-Python statement of the query semantics, and varied test events.

``evaluate`` answers a query over in-memory events the slow, obvious way; the
chDB tests compare the compiled SQL's answers with it. It shares no code with
``limelight.query`` beyond the names of the operations, so a mistake in the
compiler shows up as a disagreement here.

Semantics (the README quotes the table in ``limelight/query/__init__.py``):
- A key is a dotted path through nested objects (``a.b`` also finds a key named
  ``"a.b"``; when an event names one path both ways, its first value counts);
  keys ``_timestamp``, ``_dataset``, ``_service``, ``_namespace``, ``_id`` are
  the system fields. A JSON null is the same as a missing key.
- A key is present when it holds a value, an array or an object with a value
  somewhere inside (an empty object, or one of nulls, is missing); EXISTS,
  DOES_NOT_EXIST, COUNT with a key and the negated operations test presence.
- Values have a kind: string, number (not booleans), boolean, or array.
  A comparison only matches values of the kind of the filter's value.
- Negated operations (!=, NOT_LIKE, DOES_NOT_INCLUDE, NOT_IN) match when the
  key is present and the positive operation does not match.
"""

from __future__ import annotations

import functools
import json
import math
import operator
import random
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import orjson

SYSTEM = ("_timestamp", "_dataset", "_service", "_namespace", "_id")
PERCENTILES = {
    "MEDIAN": 0.5,
    "P001": 0.001,
    "P01": 0.01,
    "P05": 0.05,
    "P10": 0.1,
    "P25": 0.25,
    "P75": 0.75,
    "P90": 0.9,
    "P95": 0.95,
    "P99": 0.99,
    "P999": 0.999,
}
NUMBER_TEXT = re.compile(r"-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?")
ASCII_UPPER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

# ---------------------------------------------------------------- events


def generate_events(count: int, seed: int, now_ms: int, span_ms: int) -> list[dict[str, Any]]:
    """Varied events: mixed types per key, missing keys, nesting, dotted keys, arrays.

    Floats are multiples of 1/8 so that sums are exact in binary floating point
    and SUM / AVG can be compared exactly.
    """
    rnd = random.Random(seed)
    services = ["api", "web", "worker", "Billing", "ünïcode"]
    words = ["alpha", "beta", "gamma", "delta", "error", "Timeout", "user_login", "50% off"]
    events = []
    for _ in range(count):
        event: dict[str, Any] = {"timestamp": now_ms - rnd.randrange(span_ms)}
        if rnd.random() < 0.95:
            event["service"] = rnd.choice(services)
        if rnd.random() < 0.5:
            event["namespace"] = rnd.choice(["ns-a", "ns-b", "lambda-x"])
        event["message"] = f"{rnd.choice(words)} {rnd.choice(words)} #{rnd.randrange(100)}"
        roll = rnd.random()
        if roll < 0.55:
            event["duration"] = rnd.randrange(0, 5000)
        elif roll < 0.8:
            event["duration"] = rnd.randrange(-800, 40000) / 8
        elif roll < 0.87:
            event["duration"] = str(rnd.randrange(0, 100))  # a number sent as text
        elif roll < 0.92:
            event["duration"] = None
        event["status"] = rnd.choice([200, 200, 200, 201, 404, 500, "ok", True])
        if rnd.random() < 0.7:
            event["ok"] = rnd.random() < 0.8
        event["requestId"] = f"req-{rnd.randrange(3000):05d}"
        roll = rnd.random()
        if roll < 0.3:
            event["tags"] = rnd.sample(["red", "green", "blue", "Red"], rnd.randrange(1, 4))
        elif roll < 0.45:
            event["tags"] = rnd.sample([1, 2, 3, 10], rnd.randrange(1, 3))
        elif roll < 0.5:
            event["tags"] = "red,green"  # text that merely looks like a list
        elif roll < 0.55:  # kinds mixed in one array
            event["tags"] = rnd.choice([[1, "red"], [True, "blue", 2], [True, 10]])
        if rnd.random() < 0.6:
            event["data"] = {
                "userId": f"u{rnd.randrange(60)}",
                "http": {"status": rnd.choice([200, 302, 404, 503])},
            }
            if rnd.random() < 0.3:
                event["data"]["depth"] = {"level": rnd.randrange(5), "name": rnd.choice(words)}
        if rnd.random() < 0.5:
            event["http.method"] = rnd.choice(["GET", "POST", "PUT", "get"])
        if rnd.random() < 0.2:
            event["limit"] = rnd.randrange(0, 50)
        if rnd.random() < 0.05:
            event["we`ird\\key"] = {"sp ace": rnd.choice([1, "x"])}
        if rnd.random() < 0.4:  # text that looks like a time stays text
            event["when"] = rnd.choice(
                [
                    "2024-05-01",
                    "2024-05-01T10:00:00Z",
                    "2024-05-01 10:00:00",
                    "2024-06-30",
                    20240501,
                ]
            )
        if rnd.random() < 0.1:
            event["ratio"] = rnd.choice([0.5, 0.25, 1, 2.75])
        if len(events) % 6 in (1, 3, 5):  # objects that are present, or hold no value
            event["error"] = [
                {"message": f"boom {len(events) % 4}", "stack": "at x", "code": len(events) % 3},
                {},
                {"code": None, "inner": {}},
            ][len(events) % 6 // 2]
        elif len(events) % 12 == 2:
            event["error"] = "text"
        if len(events) % 10 == 7:  # one path named twice: the first value counts
            event["twice.n"] = len(events) % 3
            event["twice"] = {"n": "second", "other": True}
        if len(events) % 4 == 0:  # braces in key names (no draw: the sequence above stays)
            event["a{b"] = len(events) % 3
            event["a{{b"] = f"s{len(events) % 5}"
            event["a}b"] = len(events) % 7 == 0
        events.append(event)
    return events


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class Record:
    """One stored event as the reference sees it."""

    event: dict[str, Any]
    raw: str
    system: dict[str, Any]  # _timestamp, _dataset, _service, _namespace, _id as stored
    flat: dict[str, Any]  # every leaf path -> value (null leaves left out)
    objects: frozenset[str]  # every path that holds an object with a value inside

    @functools.cached_property
    def folded_raw(self) -> str:
        """The text with its ASCII letters folded to one case, as a needle without matchCase
        compares it (worked out once: each query with a needle reads every event's)."""
        return self.raw.translate(ASCII_UPPER)


def _leaves(obj: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for name, value in obj.items():
        path = f"{prefix}{name}"
        if isinstance(value, dict):
            yield from _leaves(value, path + ".")
        elif value is not None:
            yield path, value


def _as_stored(value: Any) -> Any:
    """The number the engine holds for a value: it parses JSON text, so a whole float is
    the integer its shortest digits write (1.152921504606847e18 is 1152921504606847000,
    not the double's own digits); a filter's whole float from 2**53 on is read so too,
    within the engine's integers."""
    if type(value) is float and value.is_integer() and abs(value) < 1e21:
        return int(Decimal(repr(value)))
    return value


def _filter_value(value: Any) -> Any:
    if isinstance(value, list):
        return [_filter_value(v) for v in value]
    if type(value) is float and abs(value) >= 2**53 and -(2**63) <= _as_stored(value) < 2**64:
        return _as_stored(value)
    return value


def make_record(event: dict[str, Any], raw: bytes, system: dict[str, Any]) -> Record:
    flat: dict[str, Any] = {}
    for path, value in _leaves(event):
        # A path named twice ({"a.b": 1, "a": {"b": 2}}): the first.
        flat.setdefault(path, _as_stored(value))
    # "a.b.c" makes "a.b" and "a" objects: what `present` looks for below a key.
    objects = frozenset(p.rsplit(".", i)[0] for p in flat for i in range(1, p.count(".") + 1))
    return Record(event, raw.decode(), system, flat, objects)


# The reference runs over every event for each of the correctness tests' ~1,250 cases,
# so its hottest step is a lookup by exact type; subclasses (an IntEnum, a str subclass)
# go through the checks below. bool is tested first: it is an int, but not a "number" here.
KINDS = {bool: "boolean", int: "number", float: "number", str: "string", list: "array"}


def kind_of(value: Any) -> str:
    if (kind := KINDS.get(type(value))) is not None:
        return kind
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "other"


def get(record: Record, key: str) -> Any:
    """The key's value, or None when missing (or an object, which has no single value)."""
    if key in SYSTEM:
        return record.system[key]
    return record.flat.get(key)


def present(record: Record, key: str) -> bool:
    """The key holds a value of its own, or an object with a value somewhere inside."""
    return key in SYSTEM or key in record.flat or key in record.objects


# ---------------------------------------------------------------- filters


@functools.cache
def _like(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def _as_kind(value: Any, kind: str) -> Any:
    return value if value is not None and kind_of(value) == kind else None


def _list_values(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    out: list[Any] = []
    for part in str(value).split(","):
        part = part.strip()
        if part:
            out.append(part)
            if re.fullmatch(r"-?[0-9]+", part) and -(2**63) <= int(part) < 2**64:
                out.append(int(part))  # an integer the engine stores is compared as one
            elif NUMBER_TEXT.fullmatch(part):
                out.append(_filter_value(float(part)))
    return out


def _positive(op: str, value: Any) -> Callable[[Any, Record], bool]:
    """Whether a value (not None) passes ``op`` against the filter's ``value``: what only
    the filter decides is worked out here once, not for each event (the correctness test
    asks some 800 queries of 4,000 events)."""
    if op in ("IN",):
        listed = [(kind_of(v), v) for v in _list_values(value)]
        return lambda actual, _: any(
            _as_kind(actual, kind) is not None and actual == v for kind, v in listed
        )
    if isinstance(value, dict):  # {key, type}: the other key's value of that kind
        kind = value.get("type") or "string"

        def against_key(actual: Any, record: Record) -> bool:
            operand = _as_kind(get(record, value["key"]), kind)
            return operand is not None and _compare(op, kind, actual, operand)

        return against_key
    kind = kind_of(value)
    return lambda actual, _: _compare(op, kind, actual, value)


def _compare(op: str, kind: str, actual: Any, operand: Any) -> bool:
    if op == "INCLUDES":
        if isinstance(actual, list):
            return any(kind_of(el) == kind and el == operand for el in actual)
        return kind == "string" and isinstance(actual, str) and operand in actual
    mine = _as_kind(actual, kind)
    if mine is None:
        return False
    return CHECKS[op](mine, operand)


# What a comparison means once both sides are of one kind.
CHECKS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "LIKE": lambda mine, operand: _like(operand).fullmatch(mine) is not None,
    "MATCH_REGEX": lambda mine, operand: re.search(operand, mine) is not None,
    "STARTS_WITH": lambda mine, operand: mine.startswith(operand),
}


NEGATIONS = {"!=": "=", "NOT_LIKE": "LIKE", "DOES_NOT_INCLUDE": "INCLUDES", "NOT_IN": "IN"}


def filter_check(flt: Mapping[str, Any]) -> Callable[[Record], bool]:
    """Whether an event passes the filter (its value read once, for every event)."""
    op, key = flt["operation"], flt["key"]
    if op == "EXISTS":
        return lambda record: present(record, key)
    if op == "DOES_NOT_EXIST":
        return lambda record: not present(record, key)
    value = _filter_value(flt.get("value"))
    if op in NEGATIONS:
        positive = _positive(NEGATIONS[op], value)

        def negated(record: Record) -> bool:
            actual = get(record, key)
            return present(record, key) and not (actual is not None and positive(actual, record))

        return negated
    check = _positive(op, value)

    def passes(record: Record) -> bool:
        actual = get(record, key)
        return actual is not None and check(actual, record)

    return passes


def matches_filter(record: Record, flt: Mapping[str, Any]) -> bool:
    return filter_check(flt)(record)


def _needle(needle: Mapping[str, Any]) -> Callable[[Record], bool]:
    """Whether an event's text holds the needle."""
    value = needle["value"]
    if needle.get("isRegex"):
        pattern = re.compile(value, 0 if needle.get("matchCase") else re.IGNORECASE)
        return lambda record: pattern.search(record.raw) is not None
    if needle.get("matchCase"):
        return lambda record: value in record.raw
    folded = value.translate(ASCII_UPPER)
    return lambda record: folded in record.folded_raw


def _wanted_namespaces(namespaces: list[Mapping[str, str]]) -> dict[str, set[str]]:
    """The values each system field may take: one of them for each field named."""
    wanted: dict[str, set[str]] = {}
    for ns in namespaces:
        field = ns["type"] if ns["type"] in ("dataset", "service") else "namespace"
        wanted.setdefault(f"_{field}", set()).add(ns["value"])
    return wanted


def matching(
    records: list[Record], query: Mapping[str, Any], frm: int, to: int
) -> Iterator[Record]:
    """The records the query selects, in their order, one at a time: ``selects_any``
    stops at the first (the correctness test asks it of some 650 queries)."""
    wanted = _wanted_namespaces(query.get("namespaces") or [])
    checks = [filter_check(f) for f in query.get("filters") or []]
    combine = any if query.get("filter_combination") == "OR" else all
    needle = _needle(query["needle"]) if query.get("needle") else None
    for r in records:
        if not frm <= r.system["_timestamp"] < to:
            continue
        if not all(r.system[field] in values for field, values in wanted.items()):
            continue
        if checks and not combine([check(r) for check in checks]):
            continue
        if needle is not None and not needle(r):
            continue
        yield r


def select(records: list[Record], query: Mapping[str, Any], frm: int, to: int) -> list[Record]:
    return list(matching(records, query, frm, to))


def selects_any(records: list[Record], query: Mapping[str, Any], frm: int, to: int) -> bool:
    return next(matching(records, query, frm, to), None) is not None


# ---------------------------------------------------------------- calculations


def _percentile(values: list[float], level: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    xs = sorted(values)
    h = (len(xs) - 1) * level
    lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


def _sample_variance(values: list[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = math.fsum(values) / len(values)
    return math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)


def _distinct_id(value: Any) -> tuple[str, Any] | None:
    """Distinct strings, numbers (5 and 5.0 alike) and booleans; arrays are not counted."""
    kind = kind_of(value)
    # Python compares int and float exactly (5 == 5.0, 2**53 + 1 != 2**53 + 1.0), as the
    # engine's statements do.
    return (kind, value) if kind in ("string", "number", "boolean") else None


def calculate(operator: str, key: str | None, records: list[Record]) -> Any:
    values = [v for v in (get(r, key) for r in records) if v is not None] if key else []
    numbers = [v for v in values if kind_of(v) == "number"]
    if operator == "COUNT":
        return sum(1 for r in records if present(r, key)) if key else len(records)
    if operator == "HEATMAP":  # its total: the events holding a number at the key
        return len(numbers)
    if operator == "COUNT_DISTINCT":
        return len({_distinct_id(v) for v in values} - {None})
    if operator == "SUM":
        return sum(numbers)
    if operator == "AVG":
        return sum(numbers) / len(numbers) if numbers else None
    if operator == "MIN":
        return min(numbers) if numbers else None
    if operator == "MAX":
        return max(numbers) if numbers else None
    if operator in PERCENTILES:
        return _percentile([float(n) for n in numbers], PERCENTILES[operator])
    variance = _sample_variance([float(n) for n in numbers])
    if operator == "VARIANCE":
        return variance
    if operator == "STDDEV":
        return None if variance is None else math.sqrt(variance)
    raise ValueError(operator)


def value_name(calc: Mapping[str, Any]) -> str:
    if calc.get("alias"):
        return str(calc["alias"])
    return f"{calc['operator']}({calc['key']})" if calc.get("key") else str(calc["operator"])


def group_id(groups: Mapping[str, Any]) -> str:
    return orjson.dumps(groups, option=orjson.OPT_SORT_KEYS).decode()


def _group_value(value: Any) -> Any:
    """A group holds a string, number or boolean; arrays and missing keys group as null.

    Numbers are one kind: 5 and 5.0 are the same group (shown as 5); integers are
    kept exact, beyond 2**53 too.
    """
    kind = kind_of(value)
    if kind == "number" and isinstance(value, float) and value.is_integer():
        return int(value)
    return value if kind in ("string", "number", "boolean") else None


def _values(calcs: list[Mapping[str, Any]], records: list[Record]) -> dict[str, Any]:
    values = {value_name(c): calculate(c["operator"], c.get("key"), records) for c in calcs}
    values["_count"] = len(records)
    return values


def aggregate(
    records: list[Record], query: Mapping[str, Any], frm: int, to: int, granularity: int
) -> dict[str, Any]:
    """{"aggregates": {group id: values}, "series": {(time, group id): values}} (unordered)."""
    calcs = query.get("calculations") or [{"operator": "COUNT"}]
    keys = [g["key"] for g in query.get("group_bys") or []]
    chosen = select(records, query, frm, to)
    groups: dict[str, list[Record]] = {}
    buckets: dict[tuple[int, str], list[Record]] = {}
    for r in chosen:
        gid = group_id({k: _group_value(get(r, k)) for k in keys})
        groups.setdefault(gid, []).append(r)
        start = frm + (r.system["_timestamp"] - frm) // granularity * granularity
        buckets.setdefault((start, gid), []).append(r)
    if not keys and not groups:
        groups[group_id({})] = []
    out: dict[str, Any] = {
        "aggregates": {gid: _values(calcs, rs) for gid, rs in groups.items()},
        "series": {key: _values(calcs, rs) for key, rs in buckets.items()},
    }
    heatmap = [c["key"] for c in calcs if c["operator"] == "HEATMAP"]
    if heatmap:  # per bucket time, the numbers at the key, whatever the groups
        numbers: dict[int, list[float]] = {}
        for r in chosen:
            value = get(r, heatmap[0])
            if kind_of(value) == "number":
                start = frm + (r.system["_timestamp"] - frm) // granularity * granularity
                numbers.setdefault(start, []).append(float(value))
        out["heatmap"] = numbers
    return out


def _in_bucket(value: float, bucket: Mapping[str, float]) -> bool:
    """A heatmap bucket holds [min, max) of positive values, (min, max] of negative
    ones, and 0 alone."""
    low, high = bucket["min"], bucket["max"]
    if low == high == 0:
        return value == 0
    return low <= value < high if low > 0 else low < value <= high


def heatmap_mismatches(data: Mapping[str, Any], numbers: Mapping[int, list[float]]) -> list[str]:
    """Each time bucket's value buckets must count exactly the numbers inside their edges,
    hold every number once, and not overlap."""
    problems = []
    for point in data["series"]:
        held = numbers.get(point["time"], [])
        buckets = point.get("buckets")
        if buckets is None:
            problems.append(f"series {point['time']}: no buckets")
            continue
        for b in buckets:
            inside = sum(1 for v in held if _in_bucket(v, b))
            if inside != b["count"] or b["count"] == 0:
                problems.append(f"series {point['time']}: {b} holds {inside}")
        if sum(b["count"] for b in buckets) != len(held):
            problems.append(f"series {point['time']}: buckets count {len(held)} numbers apart")
        edges = [(b["min"], b["max"]) for b in buckets]
        apart = all(a[1] <= b[0] for a, b in zip(edges, edges[1:], strict=False))
        if edges != sorted(edges) or not apart:
            problems.append(f"series {point['time']}: buckets overlap or are out of order")
    return problems


# ---------------------------------------------------------------- events


def _lookup(obj: Any, parts: list[str]) -> tuple[bool, Any]:
    if not parts:
        return True, obj
    if not isinstance(obj, dict):
        return False, None
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        if name in obj:
            found, value = _lookup(obj[name], parts[n:])
            if found:
                return found, value
    return False, None


def events(
    records: list[Record], query: Mapping[str, Any], frm: int, to: int, limit: int, offset: int
) -> dict[str, Any]:
    chosen = select(records, query, frm, to)
    chosen.sort(key=lambda r: (r.system["_timestamp"], r.system["_id"]), reverse=True)
    page = chosen[offset : offset + limit]
    out = []
    for r in page:
        whole = {**r.event, **r.system}
        if not query.get("keys"):
            out.append(whole)
            continue
        picked = {}
        for spec in query["keys"]:
            key = spec["key"]
            found, value = (
                (key in whole, whole.get(key))
                if key in SYSTEM
                else _lookup(r.event, key.split("."))
            )
            if found:
                picked[key] = value
        out.append(picked)
    return {"events": out, "count": len(chosen)}


# ---------------------------------------------------------------- storing and comparing


def as_sent(data: Any) -> Any:
    """A run's shaped data as a client reads it (events are JSON text until encoded)."""
    return json.loads(orjson.dumps(data))


def store_events(
    store: Any, tenant: Any, dataset: str, batch: list[dict[str, Any]]
) -> list[Record]:
    """Store events the way the Events API does; the records carry the stored system fields."""
    from limelight.ingest.service import Origin, build_rows

    pairs = [(event, orjson.dumps(event)) for event in batch]
    rows = build_rows(Origin(tenant, dataset), pairs, may_hold_secrets=False, exact=True)
    store.insert(tenant, rows)
    return [
        make_record(
            event,
            raw,
            {
                "_timestamp": row.timestamp_ms,
                "_dataset": row.dataset,
                "_service": row.service,
                "_namespace": row.namespace,
                "_id": row.id,
            },
        )
        for (event, raw), row in zip(pairs, rows, strict=True)
    ]


APPROXIMATE = {*PERCENTILES, "STDDEV", "VARIANCE"}


def _close(actual: Any, expected: Any, approximate: bool) -> bool:
    if actual is None or expected is None:
        return actual is expected
    if approximate:
        return math.isclose(actual, expected, rel_tol=0.01, abs_tol=1e-9)
    return bool(actual == expected)


def value_mismatches(
    query: Mapping[str, Any], actual: Mapping[str, Any], expected: Mapping[str, Any]
) -> list[str]:
    """Differences between a result's values and the reference: exact, or 1% where allowed."""
    calcs = query.get("calculations") or [{"operator": "COUNT"}]
    approx = {value_name(c): c["operator"] in APPROXIMATE for c in calcs}
    out = []
    if set(actual) != set(expected):
        out.append(f"value names {sorted(actual)} != {sorted(expected)}")
    for name, want in expected.items():
        got = actual.get(name)
        if not _close(got, want, approx.get(name, False)):
            out.append(f"{name}: got {got!r}, expected {want!r}")
    return out


def _sort_key(value: Any) -> tuple[int, Any]:
    return (1, 0) if value is None else (0, value)


def check_calculations(
    query: Mapping[str, Any],
    data: Mapping[str, Any],
    expected: Mapping[str, Any],
    limit: int,
    buckets: int,
) -> list[str]:
    """Every difference between a run's aggregates and series and the reference."""
    problems: list[str] = []
    got = {group_id(a["groups"]): a["values"] for a in data["aggregates"]}
    want = expected["aggregates"]
    if len(got) != len(data["aggregates"]):
        problems.append("the same group appears twice")
    if len(want) <= limit and set(got) != set(want):
        problems.append(f"groups {sorted(got)[:5]}... != {sorted(want)[:5]}...")
    if len(want) > limit and (len(got) != limit or not set(got) <= set(want)):
        problems.append(f"expected the top {limit} of {len(want)} groups, got {len(got)}")
    for gid, values in got.items():
        problems += [
            f"group {gid}: {p}" for p in value_mismatches(query, values, want.get(gid, {}))
        ]
    for order in query.get("orders") or []:
        if order["key"] in [g["key"] for g in query.get("group_bys") or []]:
            continue
        shown = [a["values"][order["key"]] for a in data["aggregates"]]
        ranked = sorted(
            (v[order["key"]] for v in want.values()),
            key=_sort_key,
            reverse=order["order"] == "DESCENDING",
        )
        if order["order"] == "DESCENDING":  # NULLs last in both directions
            ranked = [v for v in ranked if v is not None] + [v for v in ranked if v is None]
        approx = any(
            c["operator"] in APPROXIMATE and value_name(c) == order["key"]
            for c in query.get("calculations") or []
        )
        if not all(_close(a, b, approx) for a, b in zip(shown, ranked[: len(shown)], strict=True)):
            problems.append(f"order by {order['key']}: {shown[:5]} vs {ranked[:5]}")
        break  # later orders only break ties
    if len(data["series"]) != buckets:
        problems.append(f"{len(data['series'])} series buckets, expected {buckets}")
    if "heatmap" in expected:
        problems += heatmap_mismatches(data, expected["heatmap"])
    seen = set()
    for bucket in data["series"]:
        for point in bucket["data"]:
            key = (bucket["time"], group_id(point["groups"]))
            seen.add(key)
            ref = expected["series"].get(key, {})
            problems += [
                f"series {key}: {p}" for p in value_mismatches(query, point["aggregates"], ref)
            ]
    if len(want) <= limit:
        missing = {k for k in expected["series"] if k[1] in got} - seen
        if missing:
            problems.append(f"series points missing: {sorted(missing)[:3]}")
    return problems


# ---------------------------------------------------------------- one engine per test process

_STORE: list[Any] = []


def shared_chdb_store(tmp_path_factory: Any) -> Any:
    """One chDB engine for the whole pytest process (chDB allows one path per process)."""
    if not _STORE:
        from limelight.store.events.chdb_store import ChdbEventStore

        store = ChdbEventStore(tmp_path_factory.mktemp("query-chdb"))
        store.start()
        _STORE.append(store)
    return _STORE[0]
