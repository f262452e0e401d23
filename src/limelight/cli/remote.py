"""The server a developer's command talks to, over its HTTP API: its address and admin key
from ``--url`` / ``LIMELIGHT_URL``, ``LIMELIGHT_API_KEY`` and the profiles ``limelight
login`` saves (``profiles.json`` in the user's config directory, mode 0600).

A profile's key is sent only to the address it was saved with: ``--url`` naming
another server needs ``LIMELIGHT_API_KEY``. There is no option for the key
itself, since a command line is visible to every user of the machine (``ps``).
Kept light: httpx is imported when a command runs, not when ``limelight`` starts.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit, urlunsplit

import typer

from limelight.cli.failures import BadUsage, Refused, Unusable
from limelight.cli.output import note

if TYPE_CHECKING:
    import httpx

UrlOption = Annotated[
    str | None,
    typer.Option("--url", envvar="LIMELIGHT_URL", show_envvar=True,
                 help="The server's address, e.g. http://127.0.0.1:8000."),
]  # fmt: skip
ProfileOption = Annotated[
    str | None,
    typer.Option("--profile", envvar="LIMELIGHT_PROFILE", show_envvar=True,
                 help="A profile saved by limelight login (default: default)."),
]  # fmt: skip
DEFAULT_PROFILE = "default"
# How long an answer may take, whole: httpx's timeout bounds each read of the socket, so
# a server sending a byte every few seconds held a command for as long as it kept on.
TIMEOUT_S = 30.0
# The largest answer read (a query run's data is at most 10,000 events): an endless
# body was read until the process ran out of memory.
MAX_ANSWER_BYTES = 64 * 1024 * 1024


def profiles_file() -> Path:
    """``$XDG_CONFIG_HOME/limelight/profiles.json``, else ``~/.config/limelight/...``."""
    return Path(typer.get_app_dir("limelight")) / "profiles.json"


def load_profiles() -> dict[str, dict[str, str]]:
    path = profiles_file()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise Unusable(f"cannot read {path}: {exc.strerror}") from None
    if path.stat().st_mode & 0o077:
        note(f"warning: {path} can be read by other users (chmod 600 it)")
    try:
        found = json.loads(text)
    except ValueError:
        raise Unusable(f"{path} is not valid JSON; log in again to replace it") from None
    return found if isinstance(found, dict) else {}


def save_profile(name: str, url: str, key: str) -> Path:
    """Written whole to a new file of mode 0600, then moved over the old one."""
    path = profiles_file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    profiles = load_profiles()
    profiles[name] = {"url": url, "api_key": key}
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(profiles, f, indent=2)
    os.replace(tmp, path)
    return path


def normal_url(url: str, option: str = "--url") -> str:
    """``url`` with its scheme in lower case and no final slash; BadUsage unless an http
    or https address (a port that is no number included)."""
    refused = BadUsage(f"{option}: not an http or https address: {url!r}")
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - read for the ValueError of a port that is no number
    except ValueError:
        raise refused from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise refused
    return urlunsplit(parts._replace(scheme=parts.scheme.lower())).rstrip("/")


@dataclass(frozen=True)
class Target:
    url: str
    key: str
    # Where the key came from, for what a refusal of it tells to do.
    from_env: bool = False


def target(url: str | None, profile: str | None) -> Target:
    """The server and key of a command (see the module's docstring)."""
    name = profile or DEFAULT_PROFILE
    saved = load_profiles().get(name)
    if profile and saved is None:
        raise BadUsage(f"no profile {name!r}: run limelight login --url URL --profile {name}")
    chosen = normal_url(url) if url else (saved or {}).get("url")
    if not chosen:
        raise BadUsage("no server: give --url URL (or LIMELIGHT_URL), or run limelight login")
    key = os.environ.get("LIMELIGHT_API_KEY", "").strip()
    from_env = bool(key)
    if not key and saved and normal_url(saved.get("url", "")) == chosen:
        key = saved.get("api_key", "")
    if not key:
        raise BadUsage(
            f"no admin key for {chosen}: set LIMELIGHT_API_KEY "
            f"or run limelight login --url {chosen}"
        )
    return Target(normal_url(chosen), key, from_env)


def warn_if_clear(url: str) -> None:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme.lower() == "http" and host not in ("127.0.0.1", "localhost", "::1"):
        note(f"warning: {url} is plain http: the admin key crosses the network unencrypted")


def json_of(response: httpx.Response) -> Any:
    """The answer's JSON; ValueError when it is not JSON, or nested past orjson's depth
    (the standard library's parser failed on a deep one with a RecursionError)."""
    import orjson

    return orjson.loads(response.content)


def _problem(response: httpx.Response) -> str:
    try:
        body = json_of(response)
    except ValueError:
        return f"{response.status_code} {response.reason_phrase}"
    if not isinstance(body, dict):
        return f"{response.status_code} {response.reason_phrase}"
    text = str(body.get("reason") or body.get("message") or response.reason_phrase)
    fields = "; ".join(
        f"{e.get('field')}: {e.get('message')}"
        for e in body.get("errors") or []
        if isinstance(e, dict)
    )
    return f"{response.status_code} {text}" + (f" ({fields})" if fields else "")


_FRAMING = ("content-encoding", "content-length", "transfer-encoding")


def object_of(answer: Any, name: str, where: str) -> dict[str, Any]:
    """``answer[name]``, an object, or a refusal saying the server answered otherwise."""
    found = answer.get(name) if isinstance(answer, dict) else None
    if not isinstance(found, dict):
        raise Refused(f"{where}: unexpected answer: no object {name!r}")
    return found


def objects_of(answer: Any, name: str, where: str) -> list[dict[str, Any]]:
    """``answer[name]``, a list of objects, or a refusal saying the server answered otherwise."""
    found = answer.get(name) if isinstance(answer, dict) else None
    if not isinstance(found, list) or not all(isinstance(item, dict) for item in found):
        raise Refused(f"{where}: unexpected answer: no list of objects {name!r}")
    return found


class ApiError(Refused):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class Server:
    """The server's HTTP API, with the command's key; failures as the CLI's."""

    def __init__(self, t: Target) -> None:
        import httpx

        from limelight import __version__

        warn_if_clear(t.url)
        self.url = t.url
        self._renew = "set LIMELIGHT_API_KEY to an admin key" if t.from_env else "log in again"
        self._client = httpx.Client(
            base_url=t.url,
            headers={"Authorization": t.key, "User-Agent": f"limelight-cli/{__version__}"},
            timeout=TIMEOUT_S,
        )

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *_: object) -> None:
        self._client.close()

    def send(self, method: str, path: str, *, wait_s: float = 0.0, **kwargs: Any) -> httpx.Response:
        """The whole answer, read within ``TIMEOUT_S`` plus ``wait_s`` (what the request
        asks the server to wait for) and ``MAX_ANSWER_BYTES``."""
        import httpx

        limit_s = TIMEOUT_S + wait_s
        late = Unusable(f"{self.url} did not answer within {limit_s:.0f} s")
        try:
            with self._client.stream(method, path, timeout=limit_s, **kwargs) as streamed:
                # From the answer's head on: the upload and the server's work before it
                # have httpx's own timeout, and an answer that came whole is kept.
                deadline = time.monotonic() + limit_s
                body = bytearray()
                for chunk in streamed.iter_bytes():
                    body += chunk
                    if len(body) > MAX_ANSWER_BYTES:
                        raise Refused(
                            f"{method} {path}: the answer is larger than "
                            f"{MAX_ANSWER_BYTES // 2**20} MB"
                        )
                    if time.monotonic() > deadline:
                        raise late
        except httpx.TimeoutException:
            raise late from None
        except httpx.DecodingError:  # compressed as its head does not say
            raise Refused(f"{method} {path}: the answer cannot be decoded") from None
        except httpx.TransportError as exc:
            raise Unusable(f"cannot reach {self.url}: {exc}") from None
        # The body as read (decompressed): the headers that described its encoding go.
        headers = [(k, v) for k, v in streamed.headers.multi_items() if k not in _FRAMING]
        return httpx.Response(
            streamed.status_code, headers=headers, content=bytes(body), request=streamed.request
        )

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """The JSON answer of a 2xx; ``ApiError`` saying what the server answered else."""
        response = self.send(method, path, **kwargs)
        if response.status_code == 401:
            raise ApiError(f"{self.url} refused the key (401): {self._renew}", 401)
        if response.status_code >= 400:
            raise ApiError(f"{method} {path}: {_problem(response)}", response.status_code)
        try:
            return json_of(response)
        except ValueError:
            raise Refused(f"{method} {path}: the answer is not JSON") from None
