"""The `data` column holds what its own expression made of `raw` before inserts sent it
(store.events.base): the same values and the same stored types, for every shape of
number, on both transports."""

from __future__ import annotations

import json

import pytest

from limelight.event_json import data_text, dumps_exact, loads_exact
from limelight.store.events.base import EventRow, EventStore
from limelight.tenant import Tenant

TENANT = Tenant("ws_data_column", "env")
NOW_MS = 1_790_000_000_000
# What the column's expression did: parse into JSON, then convert to the column's type.
BEFORE = "CAST(CAST(raw, 'JSON'), 'JSON(max_dynamic_paths = 256)')"

TEXTS = [
    '{"n":5.0}',
    '{"n":-0.0}',
    '{"n":0.0,"m":0,"k":-0}',
    '{"n":1e16,"m":1E+16,"k":1.5e16}',
    '{"n":9007199254740993.0}',
    '{"n":9.2e18,"m":9.3e18,"k":-9.2e18,"j":-9.3e18}',
    '{"n":1e19,"m":1.8e19,"k":1.9e19,"j":1e20,"i":1.2345678901234568e20}',
    '{"n":1e21,"m":1e22,"k":-1e300,"j":5e-324,"i":2.5e-7}',
    '{"n":1.5,"m":123456789.0,"k":10.0,"j":100.00}',
    '{"n":[1.0,2.0],"m":[1.5,2.0],"k":[1.0,"a"],"j":[[1.0]],"i":[{"x":1.0}]}',
    '{"a":{"b":{"c":3.0,"d":"v1.0, beta"}},"e":"4e5f 1.0]"}',
    '{"n":18446744073709551616,"m":-9223372036854775809,"k":1.0}',
    '{"n":12345678901234567890123.0}',
    '{"s":"x.0,y","t":"1e5","u":true,"v":null,"w":{},"x":[]}',
]


def _stored_texts() -> list[bytes]:
    """The texts as ingest stores them: parsed, then written by orjson or the standard
    library (integers beyond 64 bits)."""
    return [dumps_exact(*loads_exact(text.encode())) for text in TEXTS]


def _rows() -> list[EventRow]:
    return [
        EventRow("numbers", "svc", "ns", NOW_MS + i, f"n{i:03d}", raw)
        for i, raw in enumerate(_stored_texts())
    ]


def test_numbers_are_stored_as_the_column_expression_stored_them(store: EventStore) -> None:
    store.insert(TENANT, _rows())
    result = store.query(
        f"SELECT id, raw, toJSONString(data) AS now, toJSONString({BEFORE}) AS before, "
        f"toString(JSONAllPathsWithTypes(data)) AS now_types, "
        f"toString(JSONAllPathsWithTypes({BEFORE})) AS before_types FROM {store.table} "
        "WHERE workspace_id = {w:String} AND dataset = 'numbers' ORDER BY id",
        {"w": TENANT.workspace_id},
    )
    # `raw` as stored, whatever `data` holds
    assert [r["raw"].encode() for r in result.rows] == _stored_texts()
    for row in result.rows:
        assert (row["now"], row["now_types"]) == (row["before"], row["before_types"]), row["raw"]
    # The cases the query reference relies on: 5.0 is the integer 5, -0.0 is 0.
    assert json.loads(result.rows[0]["now"]) == {"n": 5}
    assert "Int64" in result.rows[1]["now_types"]


@pytest.mark.parametrize(
    "text", ['{"n":5}', '{"s":"plain"}', '{"n":2.5,"m":[1,2]}', '{"ua":"Mozilla/5.0 (X11)"}']
)
def test_a_text_without_whole_floats_is_sent_unchanged(text: str) -> None:
    raw = text.encode()
    assert data_text(raw) is raw
