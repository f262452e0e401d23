"""OTLP/HTTP ingestion: decode traces, logs and metrics; map each item to one event."""

from limelight.ingest.otlp.codec import Encoding, encoding_of
from limelight.ingest.otlp.service import OtlpOutcome, ingest_otlp
from limelight.ingest.otlp.signals import LOGS, METRICS, TRACES, Signal, signal_for_path

__all__ = [
    "LOGS",
    "METRICS",
    "TRACES",
    "Encoding",
    "OtlpOutcome",
    "Signal",
    "encoding_of",
    "ingest_otlp",
    "signal_for_path",
]
