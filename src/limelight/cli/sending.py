"""``limelight send DATASET [FILE]``: events from a file or stdin, in batches, to a server's
Events API.

NDJSON (one object a line) or one JSON array. A batch answered 429 or 503 is
sent again after the server's ``Retry-After``; a 400 listing ``invalid``
events has stored the others, so it is not sent again, and the refused ones
are reported by their place in the input.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import IO, Annotated

import typer

from limelight.cli.failures import BadUsage, Refused
from limelight.cli.output import note, notes, say
from limelight.cli.remote import ProfileOption, Server, UrlOption, target

BATCH_EVENTS = 1_000
# Under the server's 6MB body, with room for the array's commas.
BATCH_BYTES = 4_000_000
MAX_TRIES = 10
MAX_RETRY_WAIT_S = 60.0
REFUSALS_SHOWN = 20


def _lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """(place in the input, the event's JSON text), from NDJSON or a JSON array."""
    import orjson

    head = stream.read(1)
    while head and head.isspace():
        head = stream.read(1)
    if head == b"[":
        try:
            events = orjson.loads(head + stream.read())
        except orjson.JSONDecodeError as exc:
            raise Refused(f"the input is not a JSON array: {exc}") from None
        for i, event in enumerate(events):
            yield i + 1, orjson.dumps(event)
        return
    for number, line in enumerate([head + stream.readline(), *stream], start=1):
        if line.strip():
            yield number, line.strip()


def retry_after(value: str | None) -> float:
    """Seconds to wait, from ``Retry-After`` (seconds or an HTTP date); 1 when absent."""
    if not value:
        return 1.0
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):
            seconds = 1.0
    return min(max(seconds, 0.0), MAX_RETRY_WAIT_S)


class Sender:
    def __init__(self, server: Server, path: str, headers: dict[str, str]) -> None:
        self.server, self.path, self.headers = server, path, headers
        self.sent = 0
        self.refused: list[tuple[int, str]] = []

    def send(self, batch: list[tuple[int, bytes]]) -> None:
        body = b"[" + b",".join(text for _, text in batch) + b"]"
        for _ in range(MAX_TRIES):
            response = self.server.send(
                "POST", self.path, content=body,
                headers={**self.headers, "Content-Type": "application/json"},
            )  # fmt: skip
            if response.status_code in (429, 503):
                time.sleep(retry_after(response.headers.get("retry-after")))
                continue
            if response.status_code == 202:
                self.sent += len(batch)
                return
            answer = response.json() if response.headers.get("content-type", "").startswith(
                "application/json"
            ) else {}  # fmt: skip
            if response.status_code == 400 and "invalid" in answer:
                invalid = answer["invalid"]
                self.refused += [(batch[e["index"]][0], str(e["reason"])) for e in invalid]
                extra = int(answer.get("invalidCount", len(invalid))) - len(invalid)
                if extra > 0:
                    self.refused.append((0, f"{extra} more events of this batch (not listed)"))
                self.sent += len(batch) - int(answer.get("invalidCount", len(invalid)))
                return
            reason = answer.get("reason") or answer.get("message") or response.reason_phrase
            raise Refused(
                f"the server refused a batch ({response.status_code} {reason}); "
                f"{self.sent} events were stored before it"
            )
        raise Refused(
            f"the server was still busy after {MAX_TRIES} tries; "
            f"{self.sent} events were stored before it"
        )


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
    import orjson
    from rich.progress import Progress

    if not dataset or "/" in dataset:
        raise BadUsage(f"not a dataset name: {dataset!r}")
    stream = sys.stdin.buffer if file is None or str(file) == "-" else file.open("rb")
    t = target(url, profile)
    base = (events_url or f"{t.url}/events").rstrip("/")
    headers = {"x-service": service} if service else {}
    with Server(t) as server, stream, Progress(console=notes, transient=True) as progress:
        sender = Sender(server, f"{base}/v1/{dataset}", headers)
        task = progress.add_task("sending", total=None)
        batch: list[tuple[int, bytes]] = []
        size = 0
        for place, text in _lines(stream):
            try:
                orjson.loads(text)
            except orjson.JSONDecodeError:
                sender.refused.append((place, "not valid JSON"))
                continue
            if batch and (len(batch) >= BATCH_EVENTS or size + len(text) > BATCH_BYTES):
                sender.send(batch)
                progress.update(task, completed=sender.sent + len(sender.refused))
                batch, size = [], 0
            batch.append((place, text))
            size += len(text) + 1
        if batch:
            sender.send(batch)
    say(f"sent {sender.sent} events to {dataset}")
    if sender.refused:
        for place, reason in sender.refused[:REFUSALS_SHOWN]:
            note(f"refused: {'line/element ' + str(place) + ': ' if place else ''}{reason}")
        raise Refused(f"{len(sender.refused)} events were refused")
