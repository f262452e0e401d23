"""Loki's push request as it travels: protobuf in snappy's raw block format, or JSON.

The four protobuf messages (``logproto.PushRequest`` and what it holds, Loki's
``pkg/push/push.proto``) are declared here as a descriptor and made into classes by
the protobuf library, so no generated code is kept; Loki's timestamp is protobuf's own
``google.protobuf.Timestamp``. Both forms decode to the same ``Stream``s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import cramjam
import orjson
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2
from google.protobuf.message import DecodeError

from limelight.errors import BadRequest, PayloadTooLarge


@dataclass(slots=True)
class Entry:
    time_ns: int
    line: str
    metadata: dict[str, str] = field(default_factory=dict)  # Loki's structured metadata


@dataclass(slots=True)
class Stream:
    labels: dict[str, str]
    entries: list[Entry]


# ------------------------------------------------------------------ protobuf


def _push_request_class() -> Any:
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
    proto = descriptor_pb2.FileDescriptorProto(
        name="limelight/loki_push.proto",
        package="logproto",
        syntax="proto3",
        dependency=["google/protobuf/timestamp.proto"],
    )
    f = descriptor_pb2.FieldDescriptorProto
    repeated, optional = f.LABEL_REPEATED, f.LABEL_OPTIONAL

    def message(name: str, *fields: tuple[str, int, int, int, str]) -> None:
        m = proto.message_type.add(name=name)
        for field_name, number, label, kind, type_name in fields:
            added = m.field.add(name=field_name, number=number, label=label, type=kind)
            if type_name:
                added.type_name = type_name

    message("LabelPairAdapter", ("name", 1, optional, f.TYPE_STRING, ""),
            ("value", 2, optional, f.TYPE_STRING, ""))  # fmt: skip
    message(
        "EntryAdapter",
        ("timestamp", 1, optional, f.TYPE_MESSAGE, ".google.protobuf.Timestamp"),
        ("line", 2, optional, f.TYPE_STRING, ""),
        ("structuredMetadata", 3, repeated, f.TYPE_MESSAGE, ".logproto.LabelPairAdapter"),
    )
    message(
        "StreamAdapter",
        ("labels", 1, optional, f.TYPE_STRING, ""),
        ("entries", 2, repeated, f.TYPE_MESSAGE, ".logproto.EntryAdapter"),
        ("hash", 3, optional, f.TYPE_UINT64, ""),
    )
    message("PushRequest", ("streams", 1, repeated, f.TYPE_MESSAGE, ".logproto.StreamAdapter"))
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("logproto.PushRequest"))


PushRequest = _push_request_class()


def inflate(body: bytes, limit: int) -> bytes:
    """Snappy's raw block format, as Loki reads it; its declared length is checked
    against the limit before anything is inflated."""
    try:
        size = cramjam.snappy.decompress_raw_len(body)
    except cramjam.DecompressionError as exc:
        raise BadRequest("the body is not snappy-compressed protobuf") from exc
    if size > limit:
        raise PayloadTooLarge(f"the request body is over {limit} bytes uncompressed")
    try:
        return bytes(cramjam.snappy.decompress_raw(body))
    except cramjam.DecompressionError as exc:
        raise BadRequest("the body is not snappy-compressed protobuf") from exc


def decode_protobuf(data: bytes) -> list[Stream]:
    """A PushRequest's streams, from its protobuf (already inflated: ``inflate``)."""
    request = PushRequest()
    try:
        request.ParseFromString(data)
    except DecodeError as exc:
        raise BadRequest("the body is not a Loki PushRequest") from exc
    streams = []
    for stream in request.streams:
        entries = [
            Entry(
                e.timestamp.seconds * 1_000_000_000 + e.timestamp.nanos,
                e.line,
                {pair.name: pair.value for pair in e.structuredMetadata},
            )
            for e in stream.entries
        ]
        streams.append(Stream(parse_labels(stream.labels), entries))
    return streams


# ------------------------------------------------------------------ labels

# One matcher of a selector: name="value", the value in Go's quoting.
_MATCHER = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|\})', re.S)
# Go's escapes in a double-quoted string (strconv.Unquote, which Loki reads labels with):
# single characters, a byte in hex or octal, a code point in 4 or 8 hex digits.
_ESCAPE = re.compile(
    r"\\(?:([abfnrtv\\\"])|x([0-9A-Fa-f]{2})|([0-7]{3})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.|$))",
    re.S,
)
_ESCAPED = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, '"': 34}


def go_unquoted(value: str) -> str:
    """The text of a label value between its quotes, read as Go reads it.

    Written here because no library reads Go's quoting: Python's ``unicode_escape``
    codec takes Latin-1 for UTF-8 and accepts escapes Go refuses. Byte escapes build
    UTF-8 sequences together (``\\xc3\\xa9`` is one ``é``); bytes that are not UTF-8
    become U+FFFD, as an event's JSON holds text.
    """
    if "\\" not in value:
        return value
    out = bytearray()
    at = 0
    for found in _ESCAPE.finditer(value):
        out += value[at : found.start()].encode()
        single, hex_byte, octal_byte, short, long, other = found.groups()
        if single is not None:
            out.append(_ESCAPED[single])
        elif hex_byte is not None or octal_byte is not None:
            number = int(hex_byte, 16) if hex_byte is not None else int(octal_byte, 8)
            if number > 255:
                raise BadRequest(f"a label value has an escape Go does not read: {found[0]!r}")
            out.append(number)
        else:
            point = int(short or long or "", 16) if other is None else -1
            if not (0 <= point <= 0x10FFFF) or 0xD800 <= point <= 0xDFFF:
                raise BadRequest(f"a label value has an escape Go does not read: {found[0]!r}")
            out += chr(point).encode()
        at = found.end()
    out += value[at:].encode()
    return out.decode(errors="replace")


def parse_labels(text: str) -> dict[str, str]:
    """``{app="api", env="prod"}`` as a dict; a 400 for anything else."""
    text = text.strip()
    if not text.startswith("{"):
        raise BadRequest(f"the stream's labels are not a selector: {text[:100]!r}")
    labels: dict[str, str] = {}
    at = 1
    if text[1:].strip() == "}":
        return labels
    while at < len(text):
        found = _MATCHER.match(text, at)
        if found is None:
            raise BadRequest(f"the stream's labels are not a selector: {text[:100]!r}")
        name, value, end = found.groups()
        labels[name] = go_unquoted(value)
        at = found.end()
        if end == "}":
            if text[at:].strip():
                break
            return labels
    raise BadRequest(f"the stream's labels are not a selector: {text[:100]!r}")


# ------------------------------------------------------------------ JSON


def _strings(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise BadRequest(f"{what} must be an object of strings")
    return value


# Past any time an entry may have (unix nanoseconds have 19 digits): a longer string of
# digits is taken as this, unconverted (Python refuses to convert more than 4,300 digits,
# which answered 500), and is refused or replaced as any time out of range is.
_BEYOND_ANY_TIME = 10**30


def _nanoseconds(value: Any) -> int:
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value) if len(value) <= 30 else _BEYOND_ANY_TIME
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise BadRequest("an entry's time must be unix nanoseconds as a string of digits")


def _entry(value: Any) -> Entry:
    if not isinstance(value, list) or len(value) not in (2, 3) or not isinstance(value[1], str):
        raise BadRequest('each value must be ["<unix ns>", "<line>"] or with a third element')
    metadata = _strings(value[2], "structured metadata") if len(value) == 3 else {}
    return Entry(_nanoseconds(value[0]), value[1], metadata)


# The push API before Loki 0.4, which python-logging-loki still sends by default:
# {"streams": [{"labels": "{a=\"b\"}", "entries": [{"ts": "<RFC 3339>", "line": ".."}]}]}
_FRACTION = re.compile(r"(\.\d{6})\d+")


def _legacy_entry(value: Any) -> Entry:
    if not isinstance(value, dict) or not isinstance(value.get("line"), str):
        raise BadRequest('each entry must be {"ts": "<RFC 3339>", "line": "<line>"}')
    ts = value.get("ts")
    try:
        moment = datetime.fromisoformat(_FRACTION.sub(r"\1", ts)) if isinstance(ts, str) else None
    except ValueError:
        moment = None
    if moment is None:
        raise BadRequest("an entry's ts must be an RFC 3339 time")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return Entry(int(moment.timestamp() * 1_000_000) * 1000, value["line"])


def _stream(value: Any) -> Stream:
    if not isinstance(value, dict):
        raise BadRequest("each stream must be an object")
    if "labels" in value and "stream" not in value:
        labels = value["labels"]
        entries = value.get("entries")
        if not isinstance(labels, str) or not isinstance(entries, list):
            raise BadRequest('a stream must have "labels" and "entries" (or "stream", "values")')
        return Stream(parse_labels(labels), [_legacy_entry(e) for e in entries])
    values = value.get("values")
    if not isinstance(values, list):
        raise BadRequest('each stream must have "stream" labels and a list of "values"')
    return Stream(
        _strings(value.get("stream", {}), "a stream's labels"), [_entry(v) for v in values]
    )


def decode_json(body: bytes) -> list[Stream]:
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"the body is not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("streams"), list):
        raise BadRequest('the body must be {"streams": [...]}')
    return [_stream(s) for s in doc["streams"]]
