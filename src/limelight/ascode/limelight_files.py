"""Limelight's own files: ``queries``, ``alerts`` and ``boards``, each a mapping of id to
the resource's API fields (``schemas/limelight-resources.json``)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator

from limelight.ascode.documents import Document
from limelight.ascode.problems import FolderRefused
from limelight.ascode.resources import KINDS, PLURAL, Resource
from limelight.ascode.schema_check import problems
from limelight.schemas import resources_schema


@cache
def validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads(resources_schema()))


def resources_of(doc: Document) -> list[Resource]:
    """The file's resources; ``FolderRefused`` listing what does not fit the schema."""
    found = problems(doc, validator())
    if found:
        raise FolderRefused(found)
    data: dict[str, Any] = doc.data or {}
    return [
        Resource(kind, rid, body, doc, (PLURAL[kind], rid))
        for kind in KINDS
        for rid, body in (data.get(PLURAL[kind]) or {}).items()
    ]
