"""users, integrations and OAuth

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def _fk(
    name: str, target: str, *, primary_key: bool = False, index: bool = False
) -> sa.Column[str]:
    """A required reference that goes away with the row it points to."""
    width = 40 if target == "integrations" else 32
    return sa.Column(
        name,
        sa.String(width),
        sa.ForeignKey(f"{target}.id", ondelete="CASCADE"),
        nullable=False,
        primary_key=primary_key,
        index=index,
    )


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("email", sa.String(254), nullable=False, unique=True),
        sa.Column("password_hash", sa.String(256), nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "memberships",
        _fk("user_id", "users", primary_key=True),
        _fk("workspace_id", "workspaces", primary_key=True, index=True),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "console_sessions",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        _fk("user_id", "users", index=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("expires_at", TS, nullable=False),
    )
    op.create_table(
        "integrations",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("logo_svg", sa.Text, nullable=False),
        sa.Column("redirect_url", sa.String(2048), nullable=False),
        sa.Column("secret_hash", sa.String(64), nullable=False),
        sa.Column("secret_display", sa.String(32), nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "oauth_codes",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("code_hash", sa.String(64), nullable=False, unique=True),
        _fk("integration_id", "integrations", index=True),
        _fk("user_id", "users"),
        _fk("workspace_id", "workspaces"),
        sa.Column("environment_ids", sa.Text, nullable=False),
        sa.Column("redirect_uri", sa.String(2048), nullable=False),
        sa.Column("code_challenge", sa.String(128), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("expires_at", TS, nullable=False),
        sa.Column("used_at", TS, nullable=True),
        sa.Column("installation_id", sa.String(32), nullable=True),
    )
    op.create_table(
        "installations",
        sa.Column("id", sa.String(32), primary_key=True),
        _fk("integration_id", "integrations", index=True),
        _fk("user_id", "users", index=True),
        _fk("workspace_id", "workspaces"),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("revoked_at", TS, nullable=True),
    )
    op.create_table(
        "installation_environments",
        _fk("installation_id", "installations", primary_key=True),
        _fk("environment_id", "environments", primary_key=True),
        _fk("api_key_id", "api_keys"),
    )
    op.create_table(
        "oauth_tokens",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("kind", sa.String(16), nullable=False),
        _fk("integration_id", "integrations", index=True),
        _fk("installation_id", "installations", index=True),
        sa.Column("refresh_id", sa.String(32), nullable=True, index=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("expires_at", TS, nullable=False),
        sa.Column("last_used_at", TS, nullable=True),
        sa.Column("revoked_at", TS, nullable=True),
    )


def downgrade() -> None:
    for name in (
        "oauth_tokens",
        "installation_environments",
        "installations",
        "oauth_codes",
        "integrations",
        "console_sessions",
        "memberships",
        "users",
    ):
        op.drop_table(name)
