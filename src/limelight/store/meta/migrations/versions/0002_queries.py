"""saved queries and alerts

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def _tenant_columns() -> list[sa.Column[str]]:
    return [
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
    ]


def upgrade() -> None:
    op.create_table(
        "queries",
        sa.Column("id", sa.String(32), primary_key=True),
        *_tenant_columns(),
        sa.Column("fields", sa.JSON, nullable=False),
        sa.Column("author", sa.String(32), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.create_index("ix_queries_tenant", "queries", ["workspace_id", "environment_id"])
    op.create_table(
        "alerts",
        sa.Column("id", sa.String(32), primary_key=True),
        *_tenant_columns(),
        sa.Column(
            "query_id",
            sa.String(32),
            sa.ForeignKey("queries.id", ondelete="RESTRICT"),
            nullable=False,
            index=True,
        ),
        sa.Column("name", sa.String(256), nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_alerts_tenant", "alerts", ["workspace_id", "environment_id"])
    op.create_table(
        "query_runs",
        sa.Column("id", sa.String(32), primary_key=True),
        *_tenant_columns(),
        sa.Column(
            "query_id",
            sa.String(32),
            sa.ForeignKey("queries.id", ondelete="SET NULL"),
            nullable=True,
            index=True,
        ),
        sa.Column("fields", sa.JSON, nullable=False),
        sa.Column("from_ms", sa.BigInteger, nullable=False),
        sa.Column("to_ms", sa.BigInteger, nullable=False),
        sa.Column("limit", sa.Integer, nullable=True),
        sa.Column("offset", sa.Integer, nullable=True),
        sa.Column("granularity", sa.BigInteger, nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("result", sa.Text, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("finished_at", TS, nullable=True),
    )
    op.create_index("ix_query_runs_tenant", "query_runs", ["workspace_id", "environment_id"])


def downgrade() -> None:
    op.drop_table("query_runs")
    op.drop_table("alerts")
    op.drop_table("queries")
