"""Who owns data: a workspace's environment. Every read and write of events, queries,
runs and alerts carries one; both stores and every layer above them use this type."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Tenant:
    workspace_id: str
    environment_id: str
