"""values a console page shows once

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "shown_once",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "session_hash",
            sa.String(64),
            sa.ForeignKey("console_sessions.token_hash", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("page", sa.String(512), nullable=False),
        sa.Column("sealed", sa.LargeBinary, nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("shown_once")
