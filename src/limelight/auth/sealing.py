"""Secrets the server must read back (an alert's webhook signing secret, its Slack and
webhook URLs), encrypted at rest with the installation's secret key.

A hash will not do for these: signing a webhook needs the key itself, and posting
to Slack needs the URL. They are sealed with Fernet (AES-128-CBC and
HMAC-SHA256, from ``cryptography``) under a key derived from the installation's
secret key (``LIMELIGHT_SECRET_KEY``, else ``data_dir/secret.key``) with HKDF,
so the key that signs the console's forms is never used as is for a second
purpose. A copy of the metadata database (a dump, a stolen file, a backup's
``meta.db``) then holds no destination secret in clear.

Rotation: the newest key seals, and the keys listed in
``LIMELIGHT_PREVIOUS_SECRET_KEYS`` still open what they sealed (MultiFernet).
``reseal`` gives a token under the newest key; the server reseals every stored
secret at start (``auth.alert_secrets.reseal_all``), after which the previous keys
can be dropped.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from functools import cached_property

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from limelight.auth.sessions import signing_key
from limelight.errors import Unavailable
from limelight.settings import Settings

# Binds the derived key to this one use: the same secret key gives another key elsewhere.
_PURPOSE = b"limelight destination secrets v1"


class SecretUnreadable(Unavailable):
    """A sealed value that none of the configured keys opens: the secret key changed
    without the old one listed in ``LIMELIGHT_PREVIOUS_SECRET_KEYS``."""

    def __init__(self) -> None:
        super().__init__(
            "the alert's destinations cannot be read with this server's secret key; the "
            "operator lists the previous key in LIMELIGHT_PREVIOUS_SECRET_KEYS"
        )


def fernet_key(secret_key: bytes) -> bytes:
    """The Fernet key of an installation's secret key (any length, 32 bytes or more)."""
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_PURPOSE).derive(
        secret_key
    )
    return base64.urlsafe_b64encode(derived)


def previous_keys(text: str) -> list[bytes]:
    """``LIMELIGHT_PREVIOUS_SECRET_KEYS``: comma-separated, newest first."""
    return [part.strip().encode() for part in text.split(",") if part.strip()]


class Sealer:
    """Seals and opens text with the newest key; opens with the previous ones too.

    The keys are read on first use, not when the sealer is made: a command that never
    meets a secret neither reads nor creates ``data_dir/secret.key``."""

    def __init__(self, keys: Callable[[], Sequence[bytes]]) -> None:
        self._keys = keys

    @classmethod
    def of_settings(cls, settings: Settings) -> Sealer:
        return cls(lambda: [signing_key(settings), *previous_keys(settings.previous_secret_keys)])

    @cached_property
    def _fernets(self) -> list[Fernet]:
        return [Fernet(fernet_key(key)) for key in self._keys()]

    @property
    def _newest(self) -> Fernet:
        return self._fernets[0]

    @cached_property
    def _all(self) -> MultiFernet:
        return MultiFernet(self._fernets)

    def seal(self, text: str) -> str:
        return self._all.encrypt(text.encode()).decode("ascii")

    def open(self, token: str) -> str:
        """The text sealed in ``token``; ``SecretUnreadable`` when no key opens it."""
        try:
            return self._all.decrypt(token.encode("ascii")).decode()
        except (InvalidToken, UnicodeError):
            raise SecretUnreadable() from None

    def is_newest(self, token: str) -> bool:
        """Whether the newest key opens ``token`` (it needs no resealing)."""
        try:
            self._newest.decrypt(token.encode("ascii"))
        except (InvalidToken, UnicodeError):
            return False
        return True

    def reseal(self, token: str) -> str:
        """``token``'s text sealed with the newest key; ``SecretUnreadable`` as ``open``."""
        try:
            return self._all.rotate(token.encode("ascii")).decode("ascii")
        except (InvalidToken, UnicodeError):
            raise SecretUnreadable() from None
