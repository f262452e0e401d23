"""OTLP/HTTP bodies: protobuf or OTLP's JSON mapping, in and out.

OTLP JSON differs from the standard protobuf JSON mapping in one way that
matters here: trace and span ids are hex strings, not base64. They are turned
into base64 before ``json_format`` parses the document, so that the rest of the
mapping (lowerCamelCase or snake_case names, enums as names or numbers, 64-bit
integers as strings or numbers) is the library's own.
"""

from __future__ import annotations

import base64
import binascii
import re
from enum import Enum
from typing import Any

import orjson
from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message

from limelight.errors import BadRequest
from limelight.event_json import json_kind
from limelight.ingest.otlp.signals import Signal

ID_FIELDS = frozenset(
    {"traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id"}
)


class Encoding(Enum):
    PROTOBUF = "application/x-protobuf"
    JSON = "application/json"

    @property
    def media_type(self) -> str:
        return self.value


# How deep a JSON body may nest objects and arrays (the body itself is the first level).
# json_format reads at most 100 nested messages (its max_recursion_depth), which OTLP's
# JSON writes in at most 148 levels (AnyValue arrays, 47 deep); deeper than that, only
# ignored fields could hold the levels. Without a limit, a document of 1,001 to 1,024
# levels (orjson reads 1,024) made json_format's error message repr the nested value
# past Python's recursion limit: a RecursionError, answered 500.
MAX_JSON_DEPTH = 200
TOO_DEEP = f"the body nests objects and arrays more than {MAX_JSON_DEPTH} levels deep"

_MEDIA_TYPES = {
    "application/x-protobuf": Encoding.PROTOBUF,
    "application/protobuf": Encoding.PROTOBUF,
    "application/json": Encoding.JSON,
}


def encoding_of(content_type: str | None) -> Encoding | None:
    """The body encoding named by a Content-Type header, or None when unsupported."""
    if not content_type:
        return None
    return _MEDIA_TYPES.get(content_type.split(";", 1)[0].strip().lower())


# How each encoding writes a trace and a span id, said when an item's id is invalid.
ID_RULES = {
    Encoding.JSON: "OTLP JSON writes ids in hex: a traceId of 32 hex digits, a spanId of 16",
    Encoding.PROTOBUF: "OTLP protobuf writes ids as bytes: a trace_id of 16, a span_id of 8",
}
# What an id that is neither hex nor base64 becomes: one byte, a length no id has, so
# its span or log record is rejected naming the hex rule (json_format would refuse the
# whole body, every valid item with it, over one item's id).
_NOT_AN_ID = base64.b64encode(b"\0").decode()
# What json_format decodes as bytes: either base64 alphabet, padding optional.
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]*={0,2}")


BYTES_FIELDS = frozenset({"bytesValue", "bytes_value"})


def _is_base64(value: Any) -> bool:
    return (
        isinstance(value, str)
        and _BASE64.fullmatch(value) is not None
        and len(value.rstrip("=")) % 4 != 1
    )


def _id_to_base64(text: str) -> str:
    """Hex ids (the OTLP JSON rule) become base64; base64 (older clients) is left as
    sent; anything else becomes an id no item accepts."""
    if len(text) in (16, 32):
        try:
            return base64.b64encode(bytes.fromhex(text)).decode()
        except ValueError:
            pass
    return text if _is_base64(text) else _NOT_AN_ID


def _fix_ids(doc: dict[str, Any]) -> None:
    """Rewrite every id field in place, at any depth (spans, links, logs, exemplars);
    ``BadRequest`` for a document nested more than ``MAX_JSON_DEPTH`` levels deep.

    Walked level by level, not by recursion: the document may nest deeper than
    Python's recursion limit (orjson reads 1,024 levels).
    """
    level: list[Any] = [doc]
    depth = 1
    # Said once the whole document is walked: a body too deep is refused for its depth
    # whatever else is wrong in it, and a value is only shown when it is not a container
    # (the repr of a list nested a thousand levels passes Python's recursion limit).
    not_bytes = ""
    while level:
        if depth > MAX_JSON_DEPTH:
            raise BadRequest(TOO_DEEP)
        below: list[Any] = []
        for node in level:
            if isinstance(node, dict):
                for key, value in node.items():
                    if (
                        key in ID_FIELDS
                        and value is not None
                        and not isinstance(value, dict | list)
                    ):
                        # A number or a boolean is no id either: its item is rejected.
                        node[key] = _id_to_base64(value) if isinstance(value, str) else _NOT_AN_ID
                    elif (
                        key in BYTES_FIELDS
                        and value is not None
                        and not _is_base64(value)
                        and not not_bytes
                    ):
                        # json_format skips characters outside the alphabet: "!!!!" would
                        # be stored as empty bytes.
                        shown = json_kind(value) if isinstance(value, dict | list) else None
                        not_bytes = f"an attribute's {key} is not base64: " + (
                            shown or repr(str(value)[:100])
                        )
                    if isinstance(value, dict | list):
                        below.append(value)
            else:
                below.extend(item for item in node if isinstance(item, dict | list))
        level = below
        depth += 1
    if not_bytes:
        raise BadRequest(not_bytes)


def decode_request(signal: Signal, body: bytes, encoding: Encoding) -> Any:
    """The Export*ServiceRequest in ``body``; 400 when it cannot be decoded."""
    message = signal.request()
    if encoding is Encoding.PROTOBUF:
        try:
            message.ParseFromString(body)
        except DecodeError as exc:
            raise BadRequest(
                f"the body is not a valid OTLP {signal.name} protobuf message"
            ) from exc
        return message
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadRequest("the body is not valid JSON") from exc
    if not isinstance(doc, dict):
        raise BadRequest(f"the body must be an OTLP {signal.name} JSON object")
    _fix_ids(doc)
    try:
        json_format.ParseDict(doc, message, ignore_unknown_fields=True)
    except (json_format.ParseError, binascii.Error, ValueError) as exc:
        raise BadRequest(f"the body is not a valid OTLP {signal.name} JSON message: {exc}") from exc
    return message


def encode_message(message: Message, encoding: Encoding) -> bytes:
    if encoding is Encoding.PROTOBUF:
        data: bytes = message.SerializeToString()
        return data
    text: str = json_format.MessageToJson(message, indent=None)
    return text.encode()


def export_response(signal: Signal, rejected: int, error_message: str) -> Message:
    """The Export*ServiceResponse; ``partial_success`` only when something was rejected."""
    response: Message = signal.response()
    if rejected:
        partial = response.partial_success
        setattr(partial, signal.rejected_field, rejected)
        partial.error_message = error_message
    return response


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def encode_status(code: int, message: str) -> bytes:
    """A ``google.rpc.Status`` (code = field 1, message = field 2) in protobuf.

    Written by hand: it is two fields, and the package that ships the message
    (googleapis-common-protos) is not otherwise needed at run time.
    """
    text = message.encode()
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text
