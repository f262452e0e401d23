"""Rate-limit counts in the metadata database, shared by every API process.

One row per key and window (``ratelimit.WindowCounts``). An addition is one
upsert that returns the new count, so concurrent hits from several processes
are counted one by one; rows of old windows are deleted now and then.
"""

from __future__ import annotations

import threading

from sqlalchemy import BigInteger, Integer, String, delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Mapped, mapped_column

from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import Base

PURGE_EVERY = 1000


class RateCount(Base):
    __tablename__ = "rate_counts"

    key: Mapped[str] = mapped_column(String(300), primary_key=True)
    window: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    count: Mapped[int] = mapped_column(Integer)


class SqlCounts:
    def __init__(self, meta: MetaDB) -> None:
        self._meta = meta
        postgres = meta.engine.dialect.name == "postgresql"
        self._insert = postgresql.insert if postgres else sqlite.insert
        self._lock = threading.Lock()
        self._adds = 0

    def add(self, key: str, start: int, length: int, delta: int) -> tuple[int, int]:
        upsert = (
            self._insert(RateCount)
            .values(key=key, window=start, count=max(0, delta))
            .on_conflict_do_update(
                index_elements=[RateCount.key, RateCount.window],
                set_={"count": RateCount.count + delta},
            )
            .returning(RateCount.count)
        )
        with self._meta.connection(immediate=True) as c:
            current = int(c.execute(upsert).scalar_one())
            previous = c.execute(
                select(RateCount.count).where(
                    RateCount.key == key, RateCount.window == start - length
                )
            ).scalar()
            if self._purge_due():
                # Windows two back no longer count: those of this key's limiter go.
                limiter = key.split(":", 1)[0] + ":"
                c.execute(
                    delete(RateCount).where(
                        RateCount.key.startswith(limiter, autoescape=True),
                        RateCount.window < start - length,
                    )
                )
        return max(0, current), int(previous or 0)

    def read(self, key: str, start: int, length: int) -> tuple[int, int]:
        with self._meta.connection() as c:
            rows = dict(
                c.execute(
                    select(RateCount.window, RateCount.count).where(
                        RateCount.key == key, RateCount.window.in_([start, start - length])
                    )
                ).all()
            )
        return int(rows.get(start, 0)), int(rows.get(start - length, 0))

    def _purge_due(self) -> bool:
        with self._lock:
            self._adds += 1
            return self._adds % PURGE_EVERY == 0
