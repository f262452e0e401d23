"""Who owns an admin key: the user it acts for, the author of the queries it saves.

A key made by a user is theirs. A key made with ``limelight keys create`` is
owned by the user named with ``--user`` (a member of the workspace), else by
the workspace's first member; a workspace without members gets the
operator's account (the admin user ``limelight bootstrap`` made) as its first
member and owner. Without that account the command refuses, saying how to
add a user: an admin key is never made without an owner.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from limelight.errors import BadRequest
from limelight.store.meta import accounts_repo
from limelight.store.meta.accounts_models import User
from limelight.store.meta.models import Workspace, utcnow

# The operator's account, made by ``limelight bootstrap``.
ADMIN_EMAIL = "admin@limelight.local"


def admin_key_owner(s: Session, workspace: Workspace, user_ref: str | None) -> User:
    """The owner of a new admin key of ``workspace``; ``user_ref``: an id or email to use."""
    if user_ref is not None:
        user = accounts_repo.find_user(s, user_ref)
        if not accounts_repo.is_member(s, user.id, workspace.id):
            raise BadRequest(
                f"{user.email} is not a member of workspace {workspace.name!r}; add them with:"
                f" limelight users add-to-workspace {user.email} {workspace.name}"
            )
        return user
    member = accounts_repo.first_member(s, workspace.id)
    if member is not None:
        return member
    operator = accounts_repo.user_by_email(s, ADMIN_EMAIL)
    if operator is None:
        raise BadRequest(
            f"workspace {workspace.name!r} has no user to own an admin key; add one with:"
            f" limelight users create --email EMAIL --password-stdin --workspace {workspace.name}"
        )
    accounts_repo.add_member(s, operator, workspace, utcnow())
    return operator
