"""query run results: their size, when first read, and each workspace's total

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("query_runs") as batch:
        batch.add_column(
            sa.Column("result_bytes", sa.BigInteger, nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("read_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(
            sa.Column("result_dropped", sa.Boolean, nullable=False, server_default=sa.false())
        )
    op.execute("UPDATE query_runs SET result_bytes = length(result) WHERE result IS NOT NULL")
    op.create_table(
        "query_result_usage",
        sa.Column(
            "workspace_id",
            sa.String(32),
            sa.ForeignKey("workspaces.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("bytes", sa.BigInteger, nullable=False),
    )
    op.execute(
        "INSERT INTO query_result_usage (workspace_id, bytes) SELECT workspace_id,"
        " sum(result_bytes) FROM query_runs WHERE result_bytes > 0 GROUP BY workspace_id"
    )
    # The oldest results of a workspace are found without reading its other runs.
    op.create_index(
        "ix_query_runs_results", "query_runs", ["workspace_id", "result_bytes", "finished_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_query_runs_results", "query_runs")
    op.drop_table("query_result_usage")
    with op.batch_alter_table("query_runs") as batch:
        batch.drop_column("result_dropped")
        batch.drop_column("read_at")
        batch.drop_column("result_bytes")
