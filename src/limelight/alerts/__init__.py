"""Alerts on saved queries: definitions, checks, notifications, the evaluator."""
