"""OAuth errors: an RFC 6749 ``error`` code, a sentence for people, and a status.

They are not ``ExposedError``s because the OAuth endpoints answer with the
RFC's shape, ``{"error": "<code>", "message": "..."}``, not the API's.
"""

from __future__ import annotations

from limelight.errors import LimelightError


class OAuthError(LimelightError):
    def __init__(
        self,
        error: str,
        message: str,
        status: int = 400,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{error}: {message}")
        self.error = error
        self.message = message
        self.status = status
        self.headers = headers or {}


def invalid_request(message: str) -> OAuthError:
    return OAuthError("invalid_request", message)


def invalid_grant(message: str) -> OAuthError:
    return OAuthError("invalid_grant", message)


def invalid_client(message: str, basic: bool) -> OAuthError:
    # 401 always (RFC 6749 5.2 makes it a MUST only for the Authorization header,
    # but a client that sent its secret in the body failed authentication just the same).
    headers = {"WWW-Authenticate": 'Basic realm="limelight"'} if basic else {}
    return OAuthError("invalid_client", message, 401, headers)


def invalid_token(message: str) -> OAuthError:
    """RFC 6750 3.1: a bad bearer token."""
    challenge = f'Bearer realm="limelight", error="invalid_token", error_description="{message}"'
    return OAuthError("invalid_token", message, 401, {"WWW-Authenticate": challenge})
