"""resources created by `limelight apply`, under the id their folder gives them

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def _owner(
    column: str, table: str, primary_key: bool = False, unique: bool = False
) -> sa.Column[str]:
    return sa.Column(
        column,
        sa.String(32),
        sa.ForeignKey(f"{table}.id", ondelete="CASCADE"),
        primary_key=primary_key,
        nullable=not primary_key,
        unique=unique,
    )


def upgrade() -> None:
    op.create_table(
        "managed_resources",
        _owner("workspace_id", "workspaces", primary_key=True),
        _owner("environment_id", "environments", primary_key=True),
        sa.Column("kind", sa.String(16), primary_key=True),
        sa.Column("managed_id", sa.String(128), primary_key=True),
        _owner("query_id", "queries", unique=True),
        _owner("alert_id", "alerts", unique=True),
        _owner("board_id", "boards", unique=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("managed_resources")
