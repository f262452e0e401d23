"""Saved queries, alert references and query runs on SQLite and on PostgreSQL.

The PostgreSQL cases run in a schema of their own (dropped afterwards) on
127.0.0.1:5432, database ``test``; they are skipped, saying why, when no
server answers there.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError

from limelight.errors import Forbidden, NotFound
from limelight.store.meta import queries_repo as repo
from limelight.store.meta import repos, runs_repo
from limelight.store.meta.alerts_models import Alert
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow
from limelight.store.meta.queries_models import QueryRun, SavedQuery
from limelight.tenant import Tenant


def _tenant(db: MetaDB) -> Tenant:
    with db.session(immediate=True) as s:
        ws = repos.create_workspace(s, f"ws-{uuid.uuid4().hex[:8]}")
        env = repos.create_environment(s, ws, "prod", redact=True)
        return Tenant(ws.id, env.id)


def _run(tenant: Tenant, query_id: str | None = None, age: timedelta = timedelta()) -> QueryRun:
    return QueryRun(
        id=uuid.uuid4().hex[:20],
        workspace_id=tenant.workspace_id,
        environment_id=tenant.environment_id,
        query_id=query_id,
        fields={"calculations": [{"operator": "COUNT"}]},
        from_ms=1_000,
        to_ms=2_000,
        status=runs_repo.STARTED,
        created_at=utcnow() - age,
    )


def test_queries_are_seen_only_by_their_tenant(db: MetaDB) -> None:
    mine, theirs = _tenant(db), _tenant(db)
    with db.session(immediate=True) as s:
        first = repo.create_query(s, mine, {"name": "errors"}, author="u1").id
        second = repo.create_query(s, mine, {"name": "slow"}, author=None).id
        repo.create_query(s, theirs, {"name": "theirs"}, author=None)

    with db.session() as s:
        listed = repo.list_queries(s, mine)
        assert [q.id for q in listed] == [first, second]
        assert [q.fields for q in listed] == [{"name": "errors"}, {"name": "slow"}]
        assert listed[0].author == "u1"
        assert [q.fields["name"] for q in repo.list_queries(s, theirs)] == ["theirs"]
        with pytest.raises(NotFound):
            repo.get_query(s, theirs, first)
    with db.session(immediate=True) as s, pytest.raises(NotFound):
        repo.delete_query(s, theirs, first)
    with db.session() as s:
        assert repo.get_query(s, mine, first).fields == {"name": "errors"}


SECOND = timedelta(seconds=1)


def test_replacing_fields_moves_updated_at_only(db: MetaDB) -> None:
    tenant = _tenant(db)
    created_at = datetime(2026, 11, 23, 10, 0, 0, 123000, tzinfo=UTC)
    with db.session(immediate=True) as s:
        query_id = repo.create_query(s, tenant, {"name": "a"}, author=None, now=created_at).id
    with db.session(immediate=True) as s:
        repo.replace_query_fields(
            s, tenant, query_id, {"name": "b", "description": "d"}, now=created_at + SECOND
        )
    with db.session() as s:
        stored = repo.get_query(s, tenant, query_id)
        assert stored.fields == {"name": "b", "description": "d"}
        assert stored.created_at == created_at
        assert stored.updated_at == created_at + SECOND


def test_a_query_used_by_an_alert_cannot_be_deleted(db: MetaDB) -> None:
    tenant = _tenant(db)
    with db.session(immediate=True) as s:
        query_id = repo.create_query(s, tenant, {}, author=None).id
        repo.add_alert_reference(s, tenant, query_id, "High error rate")

    with db.session(immediate=True) as s, pytest.raises(Forbidden) as refused:
        repo.delete_query(s, tenant, query_id)
    assert "High error rate" in refused.value.message

    # The database refuses too, for any code path that would skip the check.
    with pytest.raises(IntegrityError), db.session(immediate=True) as s:
        s.execute(delete(SavedQuery).where(SavedQuery.id == query_id))

    with db.session(immediate=True) as s:
        s.execute(delete(Alert).where(Alert.query_id == query_id))
    with db.session(immediate=True) as s:
        repo.delete_query(s, tenant, query_id)
    with db.session() as s, pytest.raises(NotFound):
        repo.get_query(s, tenant, query_id)


def test_a_run_settles_once_and_outlives_its_query(db: MetaDB) -> None:
    tenant, other = _tenant(db), _tenant(db)
    with db.session(immediate=True) as s:
        query_id = repo.create_query(s, tenant, {}, author=None).id
        run_id = runs_repo.add_run(s, _run(tenant, query_id)).id

    with db.session(immediate=True) as s:
        assert runs_repo.finish_run(s, run_id, runs_repo.FAILED, error="took too long")
    with db.session(immediate=True) as s:
        assert not runs_repo.finish_run(s, run_id, runs_repo.COMPLETED, result='{"events": []}')
    with db.session(immediate=True) as s:
        repo.delete_query(s, tenant, query_id)

    with db.session() as s:
        run = runs_repo.get_run(s, tenant, run_id)
        assert (run.status, run.error, run.result) == (runs_repo.FAILED, "took too long", None)
        assert run.query_id is None
        assert run.finished_at is not None
        with pytest.raises(NotFound):
            runs_repo.get_run(s, other, run_id)


def test_old_runs_are_purged(db: MetaDB) -> None:
    tenant = _tenant(db)
    with db.session(immediate=True) as s:
        old = runs_repo.add_run(s, _run(tenant, age=timedelta(days=2))).id
        new = runs_repo.add_run(s, _run(tenant)).id
    with db.session(immediate=True) as s:
        assert runs_repo.purge_runs(s, utcnow() - timedelta(days=1)) == 1
    with db.session() as s:
        assert runs_repo.get_run(s, tenant, new).id == new
        with pytest.raises(NotFound):
            runs_repo.get_run(s, tenant, old)


def test_a_run_recorded_without_a_creation_time_gets_one(db: MetaDB) -> None:
    tenant = _tenant(db)
    run = _run(tenant)
    run.created_at = None  # type: ignore[assignment]
    with db.connection(immediate=True) as c:
        runs_repo.add_run(c, run)
    with db.session() as s:
        stored = runs_repo.get_run(s, tenant, run.id)
        assert stored.created_at is not None
        assert (utcnow() - stored.created_at).total_seconds() < 60
        assert stored.fields == {"calculations": [{"operator": "COUNT"}]}
