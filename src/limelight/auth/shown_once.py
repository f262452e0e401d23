"""What a console page shows once, after the form that made it: a new admin key, an
alert's webhook secret, a test notification's outcome.

A form answers with a redirect (303), so that reloading the page it leads to
never sends the form again; what the form made must outlive that redirect, and
no longer than its first display. It is kept in the metadata database for the
session that sent the form and the page the redirect names, and the first view
of that page takes it (one DELETE ... RETURNING: two views at once cannot both
show it). Never in the address, where history, logs and a shared link would keep it.

Kept sealed (AES-GCM) under a key derived from the session's cookie, which the
server does not store (only its SHA-256): the database, or a backup of it, holds
no readable secret, and another session has neither the row nor the key. The
page is the sealed value's associated data, so a value cannot be moved to
another page either. A value nobody took expires after ``LIFETIME_SECONDS`` and
goes with its session at logout.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeGuard

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from limelight.auth.secrets import SecretKind, hash_secret, kind_of
from limelight.store.meta import accounts_repo as accounts
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow

# The redirect is followed at once; a value left longer was never going to be shown.
LIFETIME_SECONDS = 300
NONCE_BYTES = 12
_INFO = b"limelight shown-once v1"


def _cipher(cookie: str) -> AESGCM:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(cookie.encode())
    return AESGCM(key)


def _is_session(cookie: str | None) -> TypeGuard[str]:
    return cookie is not None and len(cookie) <= 128 and kind_of(cookie) is SecretKind.SESSION


class ShownOnce:
    def __init__(
        self,
        db: MetaDB,
        clock: Callable[[], datetime] = utcnow,
        lifetime: int = LIFETIME_SECONDS,
    ) -> None:
        self.db = db
        self.clock = clock
        self.lifetime = lifetime

    def keep(self, cookie: str, page: str, value: Any) -> None:
        """Keep ``value`` (JSON) for the next view of ``page`` by the session of ``cookie``."""
        if not _is_session(cookie):
            raise ValueError("a value shown once needs a console session")
        nonce = os.urandom(NONCE_BYTES)
        sealed = nonce + _cipher(cookie).encrypt(nonce, orjson.dumps(value), page.encode())
        with self.db.session() as s:
            accounts.keep_shown_once(
                s, hash_secret(cookie), page, sealed, self.clock(), self.lifetime
            )

    def take(self, cookie: str | None, page: str) -> list[Any]:
        """The values kept for this session's view of ``page``, oldest first; none after."""
        if not _is_session(cookie):
            return []
        digest = hash_secret(cookie)
        now = self.clock()
        # Most views of a page have nothing to take: they only read.
        with self.db.session() as s:
            if not accounts.has_shown_once(s, digest, page, now):
                return []
        with self.db.session() as s:
            sealed = accounts.take_shown_once(s, digest, page, now)
        cipher = _cipher(cookie)
        values = []
        for blob in sealed:
            try:
                plain = cipher.decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], page.encode())
            except InvalidTag:
                continue  # not sealed for this cookie and page: nothing this session may see
            values.append(orjson.loads(plain))
        return values
