"""Limelight: a self-hostable observability platform."""

__version__ = "0.1.0"
