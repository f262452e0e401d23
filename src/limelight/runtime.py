"""The long-lived parts of a running server, built from the settings and injected."""

from __future__ import annotations

from dataclasses import dataclass, field

from limelight.alerts.evaluator import Evaluator
from limelight.alerts.service import AlertService
from limelight.runs import QueryRunService
from limelight.settings import Settings
from limelight.store.events import EventStore, open_event_store
from limelight.store.meta.db import MetaDB


@dataclass
class Runtime:
    settings: Settings
    meta: MetaDB
    events: EventStore
    runs: QueryRunService
    alerts: AlertService
    evaluator: Evaluator
    started: bool = field(default=False)

    @classmethod
    def build(cls, settings: Settings) -> Runtime:
        """Construct without I/O; ``start`` opens engines and applies migrations."""
        meta, events = MetaDB(settings.resolved_database_url), open_event_store(settings)
        return cls(
            settings,
            meta,
            events,
            QueryRunService(settings, meta, events),
            AlertService(settings, meta),
            Evaluator(settings, meta, events),
        )

    def start(self) -> None:
        if self.started:
            return
        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        self.meta.migrate()
        self.events.start()
        self.runs.start()
        if self.settings.alerts_evaluate:
            self.evaluator.start()
        self.started = True

    def close(self) -> None:
        self.evaluator.close()
        self.runs.close()
        self.events.close()
        self.meta.dispose()
        self.started = False
