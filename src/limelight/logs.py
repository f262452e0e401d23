"""Logging of a serving process: one format for every logger (ours and uvicorn's), as
text or as one JSON object per line (``LIMELIGHT_LOG_FORMAT``), on stderr.

Every record carries the process id: with ``serve --workers N`` several processes
write to the same stream, and the access log must say which one served a request.
"""

from __future__ import annotations

import logging
import logging.config
from datetime import UTC, datetime
from typing import Any

from pythonjsonlogger.json import JsonFormatter

from limelight.settings import Settings


def _iso(created: float) -> str:
    return datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")


class TextFormatter(logging.Formatter):
    """``2026-11-21T10:00:00.000+00:00 INFO [1234] limelight.access: message``."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{_iso(record.created)} {record.levelname} [{record.process}] {record.name}: "
        line += record.getMessage()
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonLineFormatter(JsonFormatter):
    """One JSON object per record: time, level, logger, pid, message and the record's
    ``extra`` fields (the access log's method, path, status, ...)."""

    def __init__(self) -> None:
        super().__init__(
            ["levelname", "name", "process", "message"],
            rename_fields={"levelname": "level", "name": "logger", "process": "pid"},
            timestamp="time",
        )

    def add_fields(
        self, log_data: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]
    ) -> None:
        super().add_fields(log_data, record, message_dict)
        log_data["time"] = _iso(record.created)


def log_config(settings: Settings) -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for this process and uvicorn's workers."""
    formatter = "json" if settings.log_format == "json" else "text"
    handler = {
        "class": "logging.StreamHandler",
        "formatter": formatter,
        "stream": "ext://sys.stderr",
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "text": {"()": "limelight.logs.TextFormatter"},
            "json": {"()": "limelight.logs.JsonLineFormatter"},
        },
        "handlers": {"stderr": handler},
        "loggers": {
            "limelight": {"level": "INFO", "handlers": ["stderr"], "propagate": False},
            # uvicorn's start-up chatter stays out; its warnings and errors come through.
            "uvicorn": {"level": "WARNING", "handlers": ["stderr"], "propagate": False},
            "uvicorn.access": {"level": "WARNING", "handlers": [], "propagate": False},
        },
        "root": {"level": "WARNING", "handlers": ["stderr"]},
    }


def configure_logging(settings: Settings) -> dict[str, Any]:
    config = log_config(settings)
    logging.config.dictConfig(config)
    return config
