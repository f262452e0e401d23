"""Alembic environment: runs on the engine handed over by ``MetaDB.migrate``."""

from alembic import context

from limelight.store.meta.models import Base

target_metadata = Base.metadata
engine = context.config.attributes["connection_engine"]

with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()
