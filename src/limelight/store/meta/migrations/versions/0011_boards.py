"""boards and their panels

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "boards",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "workspace_id",
            sa.String(32),
            sa.ForeignKey("workspaces.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "environment_id",
            sa.String(32),
            sa.ForeignKey("environments.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("name", sa.String(256), nullable=False),
        sa.Column("description", sa.Text, nullable=True),
        sa.Column("author", sa.String(32), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.create_index("ix_boards_tenant", "boards", ["workspace_id", "environment_id"])
    op.create_table(
        "board_panels",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "board_id",
            sa.String(32),
            sa.ForeignKey("boards.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column(
            "query_id",
            sa.String(32),
            sa.ForeignKey("queries.id", ondelete="RESTRICT"),
            nullable=False,
        ),
        sa.Column("title", sa.String(256), nullable=False, server_default=""),
        sa.Column("visualization", sa.String(16), nullable=False),
        sa.Column("width", sa.Integer, nullable=False),
        sa.UniqueConstraint("board_id", "position"),
    )
    op.create_index("ix_board_panels_query_id", "board_panels", ["query_id"])


def downgrade() -> None:
    op.drop_table("board_panels")
    op.drop_table("boards")
