"""What an environment holds, as the files of a folder that plans back to no change:
each resource under its managed id (or, when no apply made it, its own id)."""

from __future__ import annotations

from typing import Any

import yaml

from limelight.ascode.canonical import alert_file_form, query_form, stored_alert_form
from limelight.ascode.planning import Stored, board_file_form, board_form
from limelight.ascode.resources import KINDS, PLURAL
from limelight.schemas import RESOURCES_SCHEMA_PATH


def files_of(stored: Stored, url: str) -> dict[str, str]:
    """File name -> text, one file per kind that has resources."""
    queries = stored.names("query")
    out = {}
    for kind in KINDS:
        names = stored.names(kind)
        found: dict[str, Any] = {}
        for rid, resource in stored.resources.get(kind, {}).items():
            if kind == "query":
                form = query_form(resource)
            elif kind == "alert":
                form = alert_file_form(stored_alert_form(resource, queries))
            else:
                form = board_file_form(board_form(resource, queries))
            found[names[rid]] = form
        if found:
            head = f"# yaml-language-server: $schema={url}{RESOURCES_SCHEMA_PATH}\n"
            body = yaml.safe_dump(
                {PLURAL[kind]: found}, sort_keys=False, allow_unicode=True, width=100
            )
            out[f"{PLURAL[kind]}.yml"] = head + body
    return out
