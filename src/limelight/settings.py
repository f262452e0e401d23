"""Runtime settings, read from the environment with the prefix ``LIMELIGHT_``.

No instance is created at import time: ``Settings()`` is built by the CLI (or a
test) and injected into ``create_app``.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

MIB = 1024 * 1024
KIB = 1024


def default_data_dir() -> Path:
    """``$XDG_DATA_HOME/limelight``, else ``~/.local/share/limelight``: one place per user,
    whatever the current directory (the XDG Base Directory convention)."""
    xdg = os.environ.get("XDG_DATA_HOME", "")
    # The convention says a relative value is invalid and to be ignored.
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return base / "limelight"


def parse_networks(value: str) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """Comma-separated addresses or networks; a ``ValueError`` names a bad entry."""
    networks = []
    for entry in (p.strip() for p in value.split(",") if p.strip()):
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(f"{entry!r} is not an IP address or network") from None
    return networks


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    netloc = f"{parts.username}@{host}" if parts.username else host
    return urlunsplit(parts._replace(netloc=netloc))


class Settings(BaseSettings):
    """Every setting, with its default and what it controls (see README, "Settings")."""

    model_config = SettingsConfigDict(env_prefix="LIMELIGHT_", extra="ignore")

    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="Where the SQLite file and chDB data live; default "
        "$XDG_DATA_HOME/limelight, else ~/.local/share/limelight.",
    )
    database_url: str | None = Field(
        None, description="Metadata database URL; default: SQLite file meta.db in data_dir."
    )
    host: str = Field("127.0.0.1", description="Address the server listens on.")
    port: int = Field(8000, description="Port the server listens on.")
    public_url: str | None = Field(
        None, description="Base URL clients use (for printed URLs); default http://HOST:PORT."
    )
    header_timeout: float = Field(
        10,
        gt=0,
        description="Seconds a request's head may take to arrive; then the connection is closed.",
    )
    keep_alive_timeout: int = Field(
        5, ge=1, description="Seconds an idle keep-alive connection stays open."
    )
    max_concurrency: int = Field(
        1000, ge=1, description="Open connections past which a request is answered 503."
    )
    max_connections: int = Field(
        2000, ge=1, description="Open connections past which a new one is closed at once."
    )
    access_log: bool = Field(
        True, description="Log one line per request (method, path, status, time, bytes, tenant)."
    )
    log_format: Literal["text", "json"] = Field(
        "text", description="text (one line per record) or json (one JSON object per line)."
    )
    metrics_allow: str = Field(
        "127.0.0.1/32,::1/128",
        description="Addresses or networks (comma-separated CIDRs) that may read /metrics; "
        "others get 404. Empty: nobody.",
    )
    trusted_proxies: str = Field(
        "",
        description="Reverse proxies (comma-separated addresses or networks) whose "
        "X-Forwarded-For and X-Forwarded-Proto are believed; none by default.",
    )

    events_backend: Literal["chdb", "clickhouse"] = Field(
        "chdb", description="chdb (embedded, default) or clickhouse (a ClickHouse server)."
    )
    clickhouse_url: str = Field(
        "http://default:@127.0.0.1:8123/limelight",
        description="ClickHouse server URL when events_backend=clickhouse.",
    )
    clickhouse_database: str = Field(
        "limelight",
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="ClickHouse database for events.",
    )
    clickhouse_cluster: str | None = Field(
        None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="A ClickHouse cluster's name: the events tables become Replicated on every"
        " shard, with Distributed tables over them (ON CLUSTER).",
    )
    redis_url: str | None = Field(
        None,
        description="Redis for the counts API processes share (rate limits); default: the"
        " metadata database in server mode, this process's memory in the embedded mode.",
    )

    max_request_bytes: int = Field(6 * MIB, description="Largest uncompressed request body.")
    body_read_timeout: float = Field(
        30, gt=0, description="Seconds a request body may take to arrive; then 408."
    )
    max_event_bytes: int = Field(256 * KIB, description="An event must be smaller than this.")
    max_events_per_request: int = Field(
        100_000, description="Most events in one Events API request."
    )
    max_stored_bytes_per_request: int = Field(
        64 * MIB, description="Most JSON one request may store (OTLP repeats resources)."
    )
    past_days_per_minute: int = Field(
        100,
        ge=1,
        description="Most days (UTC) before yesterday or after tomorrow an environment's "
        "events may fall on, a minute; past it ingest answers 429 (each day is a part).",
    )
    redact_secrets: bool = Field(
        True, description="Default for new environments: replace values of secret-looking keys."
    )
    regex_dictionaries: bool = Field(
        False,
        description="Answer a regex needle from the text indexes' dictionaries (5x faster"
        " over many events). Their tokens are every workspace's: another workspace's events"
        " (tens of MB of words a regex finds) can make such a search slow or run out of"
        " memory, and its time tells how many of their tokens it finds. For workspaces"
        " that trust each other.",
    )
    ingest_buffer: bool = Field(
        True,
        description="Embedded mode: acknowledge small batches from a write-ahead log in"
        " data_dir/wal and insert them in large blocks; off: each batch is inserted (grouped"
        " while the engine is busy) before it is acknowledged.",
    )
    ingest_buffer_bytes: int = Field(
        256 * MIB,
        gt=0,
        description="Most bytes of acknowledged events that wait for the embedded engine;"
        " past it (or an environment's quarter of it) small batches get 503.",
    )
    ingest_buffer_lag: float = Field(
        30,
        gt=0,
        description="Seconds an environment's oldest waiting event may wait for the embedded"
        " engine; past it that environment's batches get 503.",
    )

    otel_default_dataset: str = Field(
        "otel", description="Dataset of OTLP data sent without an x-dataset header."
    )
    otel_max_in_flight: int = Field(
        16, ge=1, description="OTLP requests stored at once; more get 503 with Retry-After."
    )
    otel_max_in_flight_per_workspace: int = Field(
        4, ge=1, description="OTLP requests of one workspace stored at once; more get 503."
    )

    query_max_timeframe_days: float = Field(30, description="Longest timeframe of a query run.")
    query_max_result_bytes: int = Field(6 * MIB, description="Largest result of a query run.")
    query_max_run_seconds: float = Field(
        10, description="A query run executing longer than this fails (queueing not counted)."
    )
    # The engine runs in the server's process: a run that would use more fails alone,
    # rather than take the memory the server and the other runs need.
    query_max_memory_bytes: int = Field(
        2048 * MIB, ge=MIB, description="Memory one statement of a query run may use."
    )
    query_runs_per_minute: int = Field(300, description="Query run creations per workspace.")
    query_threads: int = Field(4, description="Query runs executing at once (worker threads).")
    query_threads_per_workspace: int = Field(
        2, ge=1, description="Query runs of one workspace executing at once (fair share)."
    )
    query_results_max_bytes_per_workspace: int = Field(
        256 * MIB, ge=MIB, description="Run results one workspace may keep stored."
    )
    query_results_max_bytes: int = Field(
        2048 * MIB, ge=MIB, description="Run results the server may keep stored, in all."
    )
    query_results_retention_hours: float = Field(
        24, gt=0, description="How long a query run and its result are kept."
    )
    query_max_queue_seconds: float = Field(
        30, gt=0, description="A query run that waits longer than this for a worker fails."
    )

    # Retention (see the README, "Retention").
    retention_days: float = Field(
        30, gt=0, le=3650, description="How long events are kept, unless a dataset says otherwise."
    )
    retention_enforce: bool = Field(
        True,
        description="Remove events past their retention from this process "
        "(serve and `limelight worker`; off where another process does).",
    )
    retention_every_minutes: float = Field(
        60, gt=0, description="How often events past their retention are removed."
    )

    # Alerts (see the README, "Alerts").
    alerts_evaluate: bool = Field(
        True, description="Check due alerts in this process (off where `limelight worker` does)."
    )
    alert_threads: int = Field(2, ge=1, description="Alert checks run at once per evaluator.")
    alert_history_days: float = Field(30, gt=0, description="How long alert checks are kept.")
    alert_notifications_per_minute: int = Field(
        60, ge=1, description="Alert notifications a workspace may send a minute (per destination)."
    )
    alert_tests_per_minute: int = Field(
        10, ge=1, description="Test notifications a workspace may send per minute."
    )
    alert_deliveries_per_workspace: int = Field(
        40,
        ge=1,
        description="Alert notifications (per destination) one workspace may have being sent "
        "at once, per evaluator; past it they are recorded as not sent.",
    )
    destination_allow_networks: str = Field(
        "",
        description="Comma-separated CIDRs that alert destinations may reach although private.",
    )
    smtp_host: str | None = Field(None, description="SMTP server of alert emails.")
    smtp_port: int = Field(587, description="SMTP port.")
    smtp_user: str | None = Field(None, description="SMTP user name, if it needs one.")
    smtp_password: str | None = Field(None, description="SMTP password.")
    smtp_starttls: bool = Field(True, description="Upgrade the SMTP connection with STARTTLS.")
    smtp_from: str = Field("limelight@localhost", description="Sender address of alert emails.")

    # Accounts, console and OAuth (see the README, "Integrations").
    oauth_code_lifetime: int = Field(180, description="Seconds an authorization code is valid.")
    oauth_access_token_lifetime: int = Field(86400, description="Seconds an access token lives.")
    oauth_refresh_token_lifetime: int = Field(
        365 * 86400, description="Absolute lifetime of a refresh token, in seconds."
    )
    oauth_refresh_token_idle: int = Field(
        90 * 86400, description="A refresh token unused for this many seconds expires."
    )
    session_lifetime: int = Field(7 * 86400, description="Seconds a console login lasts.")
    auth_failure_window: int = Field(
        300, description="Window (seconds) of the failed-authentication limits below."
    )
    auth_failures_per_ip: int = Field(
        50, description="Failed logins and client authentications per address and window."
    )
    auth_failures_per_account: int = Field(
        10, description="Failed logins per email, or client authentications per client, per window."
    )
    secure_cookies: Literal["auto", "always", "never"] = Field(
        "auto",
        description="Secure cookie flag; auto: when the request is https (or X-Forwarded-Proto).",
    )
    secret_key: str | None = Field(
        None,
        description="Signs CSRF tokens and encrypts alert destination secrets; default: "
        "a random key kept in data_dir/secret.key.",
    )
    previous_secret_keys: str = Field(
        "",
        description="Comma-separated earlier secret keys, newest first: they still decrypt "
        "what they encrypted until the server re-encrypts it at start (key rotation).",
    )

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'meta.db').resolve()}"

    @field_validator("data_dir")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        # Printed and written into the lock file as the installation's name: absolute.
        return value.expanduser().absolute()

    @field_validator("trusted_proxies", "metrics_allow")
    @classmethod
    def _addresses_or_networks(cls, value: str) -> str:
        # uvicorn would take a mistyped entry as a literal never matched, and "*"
        # as the header's first address, which the client writes.
        parse_networks(value)
        return value

    @property
    def stores(self) -> str:
        """Where this installation keeps its data, for people (no password shown)."""
        if self.database_url:
            meta = f"metadata {_without_password(self.database_url)}"
        else:
            meta = "metadata SQLite"
        if self.events_backend == "clickhouse":
            events = (
                f"events ClickHouse {_without_password(self.clickhouse_url)} "
                f"(database {self.clickhouse_database})"
            )
        else:
            events = "events chDB"
        return f"data directory {self.data_dir}; {meta}; {events}"

    @property
    def trusted_proxy_list(self) -> list[str]:
        return [p.strip() for p in self.trusted_proxies.split(",") if p.strip()]

    @property
    def base_url(self) -> str:
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    @property
    def events_url(self) -> str:
        return f"{self.base_url}/events"

    @property
    def otel_url(self) -> str:
        return f"{self.base_url}/otel"

    @property
    def queries_url(self) -> str:
        return self.base_url

    @property
    def auth_url(self) -> str:
        return self.base_url
