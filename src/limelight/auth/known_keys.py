"""API keys resolved before, trusted while the metadata database has not changed since.

Every request of the Events API resolves its key. Through the pool that is 130 µs of
CPU and a hop to a worker thread and back: 10-event bodies from 64 clients cost the
server 2.37 ms of CPU a request with the hop, 1.78 ms with the same lookup made on the
event loop (one server each, in turns). A cached answer is taken on the event loop.

A revocation still takes effect on the very next request: an answer is trusted only
while the database's change counter (``MetaDB.change_count``: SQLite's
``data_version``, which moves with every commit of any connection of any process, the
CLI's included) is where it was before the answer was read. Any commit empties the
cache, not only a key's: the ingest path writes nothing to the metadata database, and a
commit elsewhere costs the next request of each key one lookup. Without a counter
(PostgreSQL) nothing is cached. Refused keys are never cached, so guesses cannot fill
it; past ``MOST`` keys it starts over.
"""

from __future__ import annotations

import threading

from limelight.auth.api_keys import MAX_KEY_LENGTH, KeyContext, resolve_api_key
from limelight.auth.secrets import hash_secret
from limelight.store.meta.db import MetaDB

MOST = 10_000


class KnownKeys:
    def __init__(self, db: MetaDB, most: int = MOST) -> None:
        self._db = db
        self._most = most
        self._lock = threading.Lock()
        self._entries: dict[str, KeyContext] = {}
        self._count: int | None = None  # the change count the entries were read after

    def known(self, value: str | None) -> KeyContext | None:
        """The key's context if it was resolved since the database last changed; None
        when it must be resolved (``resolve``), which also says why it is refused."""
        if not value or len(value) > MAX_KEY_LENGTH:
            return None
        count = self._db.change_count()
        if count is None:
            return None
        digest = hash_secret(value)
        with self._lock:
            if count != self._count:
                self._entries.clear()
                self._count = count
                return None
            return self._entries.get(digest)

    def resolve(self, value: str | None) -> KeyContext:
        """``resolve_api_key``, remembering a valid key's context (blocking: the
        database is read)."""
        count = self._db.change_count()  # before the read: a commit after it is seen
        context = resolve_api_key(self._db, value)
        if count is None or value is None:
            return context
        digest = hash_secret(value)
        with self._lock:
            if count != self._count or len(self._entries) >= self._most:
                self._entries.clear()
                self._count = count
            self._entries[digest] = context
        return context
