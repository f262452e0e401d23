"""alerts: their definition, schedule and lease, and the history of their checks

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("alerts") as batch:
        batch.add_column(sa.Column("description", sa.Text, nullable=True))
        batch.add_column(
            sa.Column("calculation", sa.String(256), nullable=False, server_default="COUNT")
        )
        batch.add_column(
            sa.Column("threshold_op", sa.String(2), nullable=False, server_default=">")
        )
        batch.add_column(sa.Column("threshold_value", sa.Float, nullable=False, server_default="0"))
        batch.add_column(sa.Column("frequency_s", sa.Integer, nullable=False, server_default="60"))
        batch.add_column(sa.Column("window_s", sa.Integer, nullable=True))
        batch.add_column(sa.Column("renotify_s", sa.Integer, nullable=True))
        batch.add_column(sa.Column("destinations", sa.JSON, nullable=False, server_default="[]"))
        batch.add_column(
            sa.Column("enabled", sa.Boolean, nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("author", sa.String(32), nullable=True))
        batch.add_column(
            sa.Column("webhook_secret", sa.String(128), nullable=False, server_default="")
        )
        batch.add_column(sa.Column("state", sa.String(16), nullable=False, server_default="OK"))
        batch.add_column(sa.Column("last_checked_at", TS, nullable=True))
        batch.add_column(sa.Column("last_notified_at", TS, nullable=True))
        batch.add_column(sa.Column("last_notification", sa.String(16), nullable=True))
        batch.add_column(sa.Column("next_check_at", TS, nullable=True))
        batch.add_column(sa.Column("lease_owner", sa.String(64), nullable=True))
        batch.add_column(sa.Column("lease_until", TS, nullable=True))
        batch.add_column(sa.Column("updated_at", TS, nullable=True))
    op.create_index("ix_alerts_due", "alerts", ["enabled", "next_check_at"])
    op.create_table(
        "alert_checks",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "alert_id",
            sa.String(32),
            sa.ForeignKey("alerts.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("time", TS, nullable=False),
        sa.Column("from_ms", sa.BigInteger, nullable=False),
        sa.Column("to_ms", sa.BigInteger, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("previous_state", sa.String(16), nullable=False),
        sa.Column("values", sa.JSON, nullable=False),
        sa.Column("values_omitted", sa.Integer, nullable=False, server_default="0"),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("notifications", sa.JSON, nullable=False),
        sa.UniqueConstraint("alert_id", "to_ms"),
    )
    op.create_index("ix_alert_checks_time", "alert_checks", ["alert_id", "time"])
    op.create_index("ix_alert_checks_purge", "alert_checks", ["time"])


def downgrade() -> None:
    op.drop_table("alert_checks")
    op.drop_index("ix_alerts_due", "alerts")
    with op.batch_alter_table("alerts") as batch:
        for column in (
            "updated_at", "lease_until", "lease_owner", "next_check_at", "last_notification",
            "last_notified_at",
            "last_checked_at", "state", "webhook_secret", "author", "enabled", "destinations",
            "renotify_s", "window_s", "frequency_s", "threshold_value", "threshold_op",
            "calculation", "description",
        ):  # fmt: skip
            batch.drop_column(column)
