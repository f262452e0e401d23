"""owners of admin keys made without one, and authors of their queries

Revision ID: 0004
Revises: 0003

Admin keys made with ``limelight keys create`` had no owner, so the queries
they saved had no author. Each such key, and each such query, is given the
workspace's first member (the earliest membership), the owner the command now
picks itself. In a workspace without members they stay as they are: the API
then shows the key's id as the author of what the key saves, and "unknown"
for a query saved before.
"""

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_FIRST_MEMBER = (
    "SELECT m.user_id FROM memberships m WHERE m.workspace_id = {workspace}"
    " ORDER BY m.created_at, m.user_id LIMIT 1"
)


def upgrade() -> None:
    key_workspace = (
        "(SELECT e.workspace_id FROM environments e WHERE e.id = api_keys.environment_id)"
    )
    op.execute(
        f"UPDATE api_keys SET user_id = ({_FIRST_MEMBER.format(workspace=key_workspace)})"
        " WHERE kind = 'admin' AND user_id IS NULL"
    )
    op.execute(
        f"UPDATE queries SET author = ({_FIRST_MEMBER.format(workspace='queries.workspace_id')})"
        " WHERE author IS NULL"
    )


def downgrade() -> None:
    """Nothing to undo: an owner or an author is never taken away."""
