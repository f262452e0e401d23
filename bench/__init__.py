"""Benchmarks run by `make bench`: scripts that print figures measured side by side."""
