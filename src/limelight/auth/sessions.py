"""Console logins and CSRF tokens.

A session is a 256-bit ``ll_ss_`` value in an HttpOnly cookie, stored as its
SHA-256 with an expiry, so logout and expiry are enforced on the server. A
CSRF token is an HMAC, under a server key, of what it protects: the session
(forms of a logged-in user) or a pre-login cookie (the login form itself, so
nobody can log a victim into the attacker's account). Nothing to store.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import secrets
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from limelight.auth.passwords import verify_password
from limelight.auth.secrets import SecretKind, hash_secret, kind_of, new_secret
from limelight.auth.throttle import FailedAuthThrottle
from limelight.errors import LimelightError
from limelight.settings import Settings
from limelight.store.meta import accounts_repo as accounts
from limelight.store.meta.db import MetaDB
from limelight.store.meta.models import utcnow

SESSION_COOKIE = "ll_session"
LOGIN_COOKIE = "ll_login"
KEY_FILE = "secret.key"


class SigningKeyUnusable(LimelightError):
    """The data directory's signing key cannot be made or read whole."""


def signing_key(settings: Settings) -> bytes:
    """``LIMELIGHT_SECRET_KEY``, else a random key kept (0600) in the data dir.

    The key is written whole to a temporary file and linked into place, so a process
    starting beside the one that makes it (``serve --workers N``) reads either no
    file or the whole key: created in place and written after, it could read an
    empty file and sign with an empty key.
    """
    if settings.secret_key:
        return settings.secret_key.encode()
    path = Path(settings.data_dir) / KEY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{KEY_FILE}.")
        try:
            with os.fdopen(fd, "w") as f:  # mkstemp's file is 0600
                f.write(secrets.token_hex(32))
                f.flush()
                os.fsync(f.fileno())
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process linked its key first: that one is the key
        except OSError as exc:
            # FAT, some SMB shares and FUSE volumes have no hard links.
            no_links = exc.errno in (errno.EPERM, errno.ENOTSUP, errno.ENOSYS)
            hint = " (its filesystem may not support hard links)" if no_links else ""
            raise SigningKeyUnusable(
                f"cannot make {path}: {exc.strerror}{hint}; set LIMELIGHT_SECRET_KEY"
                " or use a data directory elsewhere"
            ) from exc
        finally:
            os.unlink(temporary)
    key = path.read_bytes().strip()
    if len(key) < 32:
        raise SigningKeyUnusable(f"{path} holds no usable key: remove it to have a new one made")
    return key


class LoginFailed(LimelightError):
    """The email and password do not match an account (which of the two is not said)."""


@dataclass(frozen=True)
class SessionUser:
    user_id: str
    email: str
    binding: str  # what this user's CSRF tokens are bound to


class Sessions:
    def __init__(
        self,
        db: MetaDB,
        settings: Settings,
        throttle: FailedAuthThrottle,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.db = db
        self.settings = settings
        self.throttle = throttle
        self.clock = clock
        self._key = signing_key(settings)

    def login(self, email: str, password: str, client_ip: str) -> str:
        """A new session cookie value; ``LoginFailed``, or ``RateLimited`` after too many."""
        # One normal form for the limit and the lookup: were they cut or stripped apart,
        # padding past the cut would make a new limit for the same account every time.
        normal = email.strip().lower()
        attempt = self.throttle.attempt(client_ip, f"login:{normal[:254]}")
        with self.db.session() as s:
            user = accounts.user_by_email(s, normal) if len(normal) <= 254 else None
            stored = user.password_hash if user else None
        # argon2 runs even for an unknown email, so both take as long.
        if not verify_password(stored, password) or user is None:
            raise LoginFailed()
        self.throttle.succeeded(attempt)
        value = new_secret(SecretKind.SESSION)
        with self.db.session() as s:
            accounts.create_session(
                s, user, hash_secret(value), self.clock(), self.settings.session_lifetime
            )
        return value

    def user(self, cookie: str | None) -> SessionUser | None:
        if not cookie or kind_of(cookie) is not SecretKind.SESSION or len(cookie) > 128:
            return None
        digest = hash_secret(cookie)
        with self.db.session() as s:
            user = accounts.session_user(s, digest, self.clock())
            if user is None:
                return None
            return SessionUser(user.id, user.email, f"session:{digest}")

    def logout(self, cookie: str | None) -> None:
        if cookie:
            with self.db.session() as s:
                accounts.delete_session(s, hash_secret(cookie))

    # -- CSRF ---------------------------------------------------------------------------

    def csrf_token(self, binding: str) -> str:
        return hmac.new(self._key, binding.encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, binding: str | None, token: str | None) -> bool:
        # compare_digest refuses str past ASCII with a TypeError; a token is hex digits.
        if not binding or not token or not token.isascii():
            return False
        return hmac.compare_digest(self.csrf_token(binding), token)


def login_binding(cookie: str | None) -> str | None:
    return f"login:{cookie}" if cookie else None


def new_login_cookie() -> str:
    return secrets.token_urlsafe(24)
