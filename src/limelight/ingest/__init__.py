"""Turning request bodies into stored events: limits, validation, enrichment."""
