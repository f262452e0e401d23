"""U+0000 in a value the metadata database stores or looks up: PostgreSQL's text cannot
hold it, and its error answered 500 (a board's name or description, an id in an
address, an OAuth client id); it is the request's fault, a 400."""

from __future__ import annotations

import pytest

from limelight import boards
from limelight.errors import BadRequest, NotFound
from limelight.store.meta import queries_repo, repos
from limelight.store.meta.db import MetaDB
from limelight.tenant import Tenant

REFUSED = r"text may not contain the character U\+0000"


@pytest.mark.parametrize(
    "db", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
def test_a_nul_in_a_stored_or_sought_value_is_a_bad_request(db: MetaDB) -> None:
    with db.session(immediate=True) as s:
        ws = repos.create_workspace(s, "nul")
        tenant = Tenant(ws.id, repos.create_environment(s, ws, "prod", redact=False).id)
    with pytest.raises(BadRequest, match=REFUSED):  # a name refuses it before: one line
        boards.create(db, tenant, {"name": "n", "description": "a\x00b"}, None)
    with pytest.raises(BadRequest, match=REFUSED), db.session() as s:
        queries_repo.get_query(s, tenant, "a\x00b")
    # The same statements without it: the database is as usable as before.
    board_id = boards.create(db, tenant, {"name": "ab"}, None)
    assert [b["id"] for b in boards.all_boards(db, tenant)] == [board_id]
    with pytest.raises(NotFound), db.session() as s:
        queries_repo.get_query(s, tenant, "ab")
