"""Credentials: API keys, secrets, passwords and the OAuth server."""
