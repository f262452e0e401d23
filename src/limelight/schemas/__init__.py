"""JSON Schemas kept in the repository and served by the server at stable addresses.

``limelight-resources.json`` describes a folder of resources (queries, alerts,
boards) as ``limelight plan`` and ``apply`` read it; editors complete a file
that names it (``# yaml-language-server: $schema=<url>``). A test checks that
its lists (operators, calculations) are the query layer's.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

RESOURCES_SCHEMA_PATH = "/schemas/limelight-resources.json"
RESOURCES_SCHEMA_FILE = Path(__file__).with_name("limelight-resources.json")


@cache
def resources_schema() -> bytes:
    return RESOURCES_SCHEMA_FILE.read_bytes()
