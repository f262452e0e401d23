"""alerts: destinations and webhook signing secrets sealed with the installation's key

The columns are renamed (``sealed_destinations``, ``sealed_webhook_secret``) so
that no code reading the old names gets a token where it expected clear text,
and every clear value is sealed in place. On PostgreSQL both become TEXT: a
token outgrows VARCHAR(128), and the destinations are no longer JSON. The
checks' history keeps each notification's target: a webhook's or Slack's URL
there moves to ``sealed_target``, sealed too.

Revision ID: 0009
Revises: 0008
"""

import json
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import context, op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def _sealer(rows: int) -> Any:
    sealer = context.config.attributes.get("sealer")
    if sealer is None and rows:
        raise RuntimeError(
            "this migration encrypts the alerts' destination secrets with the installation's "
            "secret key: apply it with the installation's settings (limelight migrate)"
        )
    return sealer


def _as_text(value: Any) -> str:
    # SQLite hands JSON back as its text; PostgreSQL's driver as the parsed value.
    return value if isinstance(value, str) else json.dumps(value)


_NOTIFICATIONS = sa.text("UPDATE alert_checks SET notifications = :n WHERE id = :id").bindparams(
    sa.bindparam("n", type_=sa.JSON)
)


def _history(convert: Callable[[dict[str, Any]], dict[str, Any]], needed: str) -> None:
    """Apply ``convert`` to every notification of the checks' history holding ``needed``."""
    bind = op.get_bind()
    page = sa.text(
        "SELECT id, notifications FROM alert_checks WHERE id > :after ORDER BY id LIMIT 1000"
    )
    after = ""
    # Read a page whole before writing: a month of checks every minute is 43,200 an alert.
    while rows := bind.execute(page, {"after": after}).all():
        for check_id, stored in rows:
            notifications = json.loads(stored) if isinstance(stored, str) else stored
            if any(needed in n and n.get("type") != "email" for n in notifications):
                converted = [n if n.get("type") == "email" else convert(n) for n in notifications]
                bind.execute(_NOTIFICATIONS, {"id": check_id, "n": converted})
        after = rows[-1][0]


def _renamed(n: dict[str, Any], old: str, new: str, value: Callable[[str], str]) -> dict[str, Any]:
    return {new if k == old else k: value(v) if k == old else v for k, v in n.items()}


def upgrade() -> None:
    bind = op.get_bind()
    rows = bind.execute(sa.text("SELECT id, webhook_secret, destinations FROM alerts")).all()
    sealer = _sealer(len(rows))  # a check's history has an alert: none without rows
    op.execute("ALTER TABLE alerts RENAME COLUMN webhook_secret TO sealed_webhook_secret")
    op.execute("ALTER TABLE alerts RENAME COLUMN destinations TO sealed_destinations")
    if bind.dialect.name == "postgresql":
        op.execute(
            "ALTER TABLE alerts ALTER COLUMN sealed_destinations DROP DEFAULT, "
            "ALTER COLUMN sealed_destinations TYPE TEXT USING sealed_destinations::text, "
            "ALTER COLUMN sealed_destinations SET DEFAULT '', "
            "ALTER COLUMN sealed_webhook_secret TYPE TEXT"
        )
    seal = sa.text(
        "UPDATE alerts SET sealed_webhook_secret = :secret, sealed_destinations = :destinations"
        " WHERE id = :id"
    )
    for alert_id, secret, destinations in rows:
        bind.execute(
            seal,
            {
                "id": alert_id,
                "secret": sealer.seal(secret or ""),
                "destinations": sealer.seal(_as_text(destinations)),
            },
        )
    if rows:
        _history(lambda n: _renamed(n, "target", "sealed_target", sealer.seal), "target")


def downgrade() -> None:
    bind = op.get_bind()
    rows = bind.execute(
        sa.text("SELECT id, sealed_webhook_secret, sealed_destinations FROM alerts")
    ).all()
    sealer = _sealer(len(rows))
    if rows:
        _history(lambda n: _renamed(n, "sealed_target", "target", sealer.open), "sealed_target")
    op.execute("ALTER TABLE alerts RENAME COLUMN sealed_webhook_secret TO webhook_secret")
    op.execute("ALTER TABLE alerts RENAME COLUMN sealed_destinations TO destinations")
    opened = sa.text(
        "UPDATE alerts SET webhook_secret = :secret, destinations = :destinations WHERE id = :id"
    )
    for alert_id, secret, destinations in rows:
        bind.execute(
            opened,
            {
                "id": alert_id,
                "secret": sealer.open(secret) if secret else "",
                "destinations": sealer.open(destinations) if destinations else "[]",
            },
        )
    if bind.dialect.name == "postgresql":
        op.execute(
            "ALTER TABLE alerts ALTER COLUMN destinations DROP DEFAULT, "
            "ALTER COLUMN destinations TYPE JSON USING destinations::json, "
            "ALTER COLUMN destinations SET DEFAULT '[]', "
            "ALTER COLUMN webhook_secret TYPE VARCHAR(128)"
        )
