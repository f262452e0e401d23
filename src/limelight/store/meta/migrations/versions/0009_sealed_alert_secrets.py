"""alerts: destinations and webhook signing secrets sealed with the installation's key

The columns are renamed (``sealed_destinations``, ``sealed_webhook_secret``) so
that no code reading the old names gets a token where it expected clear text,
and every clear value is sealed in place. On PostgreSQL both become TEXT: a
token outgrows VARCHAR(128), and the destinations are no longer JSON.

Revision ID: 0009
Revises: 0008
"""

import json
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


def upgrade() -> None:
    bind = op.get_bind()
    rows = bind.execute(sa.text("SELECT id, webhook_secret, destinations FROM alerts")).all()
    sealer = _sealer(len(rows))
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


def downgrade() -> None:
    bind = op.get_bind()
    rows = bind.execute(
        sa.text("SELECT id, sealed_webhook_secret, sealed_destinations FROM alerts")
    ).all()
    sealer = _sealer(len(rows))
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
