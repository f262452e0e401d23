"""``limelight send DATASET [FILE]``: events from a file or stdin, in batches, to a server's
Events API.

NDJSON (one object a line) or one JSON array, either of them after a UTF-8 byte
order mark or not. NDJSON is read a line at a time, so that a batch leaves as soon
as its lines have arrived (``tail -f app.log | limelight send``) and memory holds
one batch; an array is one JSON value, read whole. A batch answered 429 or 503 is
sent again after the server's ``Retry-After``; a 400 listing ``invalid`` events
has stored the others, so it is not sent again, and the refused ones are reported
by their place in the input, as is an event larger than a batch may be. A batch
answered 413 (a server with a smaller body limit) is sent again in halves.

The key goes wherever the events go: ``--events-url`` naming another server than
the command's takes the key from ``LIMELIGHT_API_KEY`` only, never from a profile,
as ``--url`` does (remote.py).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterator
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit

import typer

from limelight.cli.failures import BadUsage, Refused
from limelight.cli.output import note, notes, say
from limelight.cli.remote import (
    ProfileOption,
    Server,
    Target,
    UrlOption,
    json_of,
    normal_url,
    target,
)
from limelight.cli.terminal import shown

if TYPE_CHECKING:
    import httpx

BATCH_EVENTS = 1_000
# Under the server's 6MB body, with room for the array's commas.
BATCH_BYTES = 4_000_000
MAX_TRIES = 10
MAX_RETRY_WAIT_S = 60.0
REFUSALS_SHOWN = 20
# What the server wrote, shown in a refusal: enough to read, never a screenful.
REASON_CHARS = 300
BOM = b"\xef\xbb\xbf"
DEFAULT_PORTS = {"http": 80, "https": 443}

Line = tuple[int, bytes]  # (place in the input, the event's JSON text)


def _lines(stream: IO[bytes]) -> Iterator[Line]:
    """The events of NDJSON or of a JSON array, numbered from the input's first line."""
    number, line = 1, stream.readline().removeprefix(BOM)
    while line and not line.strip():
        number, line = number + 1, stream.readline()
    if line.lstrip().startswith(b"["):
        yield from _elements(line + stream.read())
        return
    # readline, not a list of the stream: a line is sent once it has arrived.
    while line:
        if line.strip():
            yield number, line.strip()
        number, line = number + 1, stream.readline()


def _elements(text: bytes) -> Iterator[Line]:
    import orjson

    try:
        events = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise Refused(f"the input is not a JSON array: {exc}") from None
    for i, event in enumerate(events):
        yield i + 1, orjson.dumps(event)


def retry_after(value: str | None) -> float:
    """Seconds to wait, from ``Retry-After`` (seconds or an HTTP date), within 0-60 s; 1
    when absent or unreadable (a server may answer anything: ``nan``, the year 9999)."""
    if not value:
        return 1.0
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, OverflowError):
            seconds = 1.0
    if math.isnan(seconds):  # compares false with anything: no clamp would catch it
        return 1.0
    return min(max(seconds, 0.0), MAX_RETRY_WAIT_S)


def _said(value: Any) -> str:
    """Text of the server's answer as a line may show it: control characters shown, cut."""
    text = shown(value)
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS] + "..."


class Sender:
    """Sends batches, and keeps what was stored and what was refused (the first
    REFUSALS_SHOWN refusals by their place, all of them by their count)."""

    def __init__(self, server: Server, path: str, headers: dict[str, str]) -> None:
        self.server, self.path, self.headers = server, path, headers
        self.sent = 0
        self.refused = 0
        self.shown: list[tuple[int, str]] = []

    def refuse(self, place: int, reason: str, count: int = 1) -> None:
        self.refused += count
        if len(self.shown) < REFUSALS_SHOWN:
            self.shown.append((place, reason))

    def send(self, batch: list[Line]) -> None:
        response = self._post(batch)
        status = response.status_code
        if status == 202:
            self.sent += len(batch)
            return
        if status == 413 and len(batch) > 1:
            half = len(batch) // 2
            self.send(batch[:half])
            self.send(batch[half:])
            return
        if status == 413:
            self.refuse(batch[0][0], f"the server refused it as too large ({_status(response)})")
            return
        answer = self._answer(response)
        if status == 400 and "invalid" in answer:
            self._invalid(batch, response, answer)
            return
        reason = answer.get("reason") or answer.get("message") or response.reason_phrase
        raise Refused(
            f"the server refused a batch ({status} {_said(reason)}); "
            f"{self.sent} events were stored before it"
        )

    def _post(self, batch: list[Line]) -> httpx.Response:
        """The server's answer, once it is not busy (429, 503)."""
        body = b"[" + b",".join(text for _, text in batch) + b"]"
        for _ in range(MAX_TRIES):
            response = self.server.send(
                "POST", self.path, content=body,
                headers={**self.headers, "Content-Type": "application/json"},
            )  # fmt: skip
            if response.status_code not in (429, 503):
                return response
            time.sleep(retry_after(response.headers.get("retry-after")))
        raise Refused(
            f"the server was still busy after {MAX_TRIES} tries; "
            f"{self.sent} events were stored before it"
        )

    def _answer(self, response: httpx.Response) -> dict[str, Any]:
        """The JSON object of an answer labelled JSON; {} for one that is not labelled so."""
        if not response.headers.get("content-type", "").startswith("application/json"):
            return {}
        try:
            answer = json_of(response)
        except ValueError:  # not JSON, not UTF-8, or nested past any use
            raise self._unexpected(response, "its body is not JSON") from None
        if not isinstance(answer, dict):
            raise self._unexpected(response, "its body is not a JSON object")
        return answer

    def _invalid(self, batch: list[Line], response: httpx.Response, answer: dict[str, Any]) -> None:
        """A 400 listing the refused events by their index in the batch: the others
        were stored. An index or a count the batch cannot have is no answer to trust."""
        invalid = answer["invalid"]
        if not isinstance(invalid, list) or not all(_names_one_of(e, batch) for e in invalid):
            raise self._unexpected(response, "its invalid list names no event of the batch")
        count = answer.get("invalidCount", len(invalid))
        if type(count) is not int or not len(invalid) <= count <= len(batch):
            raise self._unexpected(response, f"invalidCount is {_said(count)}")
        for entry in invalid:
            self.refuse(batch[entry["index"]][0], _said(entry.get("reason", "refused")))
        if count > len(invalid):
            extra = count - len(invalid)
            self.refuse(0, f"{extra} more events of this batch (not listed)", extra)
        self.sent += len(batch) - count

    def _unexpected(self, response: httpx.Response, what: str) -> Refused:
        return Refused(
            f"unexpected answer from the server ({_status(response)}): {what}; "
            f"{self.sent} events were stored before it"
        )


def _status(response: httpx.Response) -> str:
    return f"{response.status_code} {_said(response.reason_phrase)}"


def _names_one_of(entry: Any, batch: list[Line]) -> bool:
    # A bool is an int to Python, and a negative index would name an event from the end.
    index = entry.get("index") if isinstance(entry, dict) else None
    return type(index) is int and 0 <= index < len(batch)


def _batches(lines: Iterator[Line], sender: Sender) -> Iterator[list[Line]]:
    """The events in batches of at most BATCH_EVENTS and BATCH_BYTES, on at most the days
    a request may hold (a backfill of a year goes in several); an event that is not JSON,
    or larger than a batch may be, is refused here and the others go on."""
    import orjson

    from limelight.ingest.enrich import event_time_ms, now_ms
    from limelight.ingest.service import MAX_DAYS_PER_REQUEST
    from limelight.times import DAY_MS

    batch: list[Line] = []
    size = 2  # the array's brackets
    days: set[int] = set()
    for place, text in lines:
        if len(text) + 2 > BATCH_BYTES:
            sender.refuse(place, f"the event is {len(text)} bytes; a batch holds {BATCH_BYTES}")
            continue
        try:
            event = orjson.loads(text)
        except orjson.JSONDecodeError:
            sender.refuse(place, "not valid JSON")
            continue
        # The day the server will store it on (an event's own time, as it reads it).
        received = now_ms()
        day = (event_time_ms(event, received) if isinstance(event, dict) else received) // DAY_MS
        # One day short of the server's bound: an event without a time of its own takes
        # the server's receive time, which may fall on the next day (midnight, a clock).
        new_day = day not in days and len(days) >= MAX_DAYS_PER_REQUEST - 1
        if batch and (len(batch) >= BATCH_EVENTS or size + len(text) + 1 > BATCH_BYTES or new_day):
            yield batch
            batch, size, days = [], 2, set()
        batch.append((place, text))
        size += len(text) + 1
        days.add(day)
    if batch:
        yield batch


def _origin(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and port of an address ``normal_url`` has read."""
    parts = urlsplit(url)
    return parts.scheme, parts.hostname or "", parts.port or DEFAULT_PORTS.get(parts.scheme)


def _events_base(events_url: str | None, t: Target) -> str:
    """The Events API's address: the command's server's, or ``--events-url``.

    The key goes with the events: to another server than the command's (which is
    the profile's, when the key is a profile's), it goes only when given by
    ``LIMELIGHT_API_KEY``."""
    if not events_url:
        return f"{t.url}/events"
    base = normal_url(events_url, "--events-url")
    if _origin(base) == _origin(t.url):
        return base
    if not t.from_env:
        raise BadUsage(
            f"--events-url {base} is not on {t.url}, the server the profile's key was "
            "saved for: set LIMELIGHT_API_KEY to the key to send to it"
        )
    return base


def _input(file: Path | None) -> IO[bytes]:
    if file is None or str(file) == "-":
        return sys.stdin.buffer
    try:
        return file.open("rb")
    except OSError as exc:  # missing, a directory, not readable
        raise BadUsage(f"cannot read {file}: {exc.strerror}") from None


def send(
    dataset: Annotated[str, typer.Argument(help="The dataset to send to.")],
    file: Annotated[
        Path | None, typer.Argument(help="NDJSON or a JSON array; stdin when absent or -.")
    ] = None,
    service: Annotated[
        str | None, typer.Option("--service", help="x-service of every event.")
    ] = None,
    events_url: Annotated[
        str | None,
        typer.Option("--events-url", help="The Events API's base address (default URL/events)."),
    ] = None,
    url: UrlOption = None,
    profile: ProfileOption = None,
) -> None:
    """Send events (NDJSON or a JSON array) in batches, from a file or stdin.

    Shows a progress bar; exits 1 when the server refused some, listing them by their
    line (or place in the array)."""
    from rich.progress import Progress

    if not dataset or "/" in dataset:
        raise BadUsage(f"not a dataset name: {dataset!r}")
    t = target(url, profile)
    base = _events_base(events_url, t)
    headers = {"x-service": service} if service else {}
    with (
        _input(file) as stream,
        # The server is the one the events go to: its address is the one the plain
        # http warning and a failure to reach it name.
        Server(Target(base, t.key, t.from_env)) as server,
        Progress(console=notes, transient=True) as progress,
    ):
        sender = Sender(server, f"{base}/v1/{dataset}", headers)
        task = progress.add_task("sending", total=None)
        for batch in _batches(_lines(stream), sender):
            sender.send(batch)
            progress.update(task, completed=sender.sent + sender.refused)
    say(f"sent {sender.sent} events to {dataset}")
    if sender.refused:
        for place, reason in sender.shown:
            note(f"refused: {'line/element ' + str(place) + ': ' if place else ''}{reason}")
        raise Refused(f"{sender.refused} events were refused")
