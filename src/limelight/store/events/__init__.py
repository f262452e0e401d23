"""Event storage: one SQL dialect over chDB (embedded) or a ClickHouse server."""

from limelight.store.events.base import EventRow, EventStore, QueryResult, encode_rows
from limelight.store.events.factory import open_event_store
from limelight.tenant import Tenant

__all__ = ["EventRow", "EventStore", "QueryResult", "Tenant", "encode_rows", "open_event_store"]
