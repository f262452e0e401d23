"""Sending a check's notifications: a signed webhook, a Slack message, an email
(their contents are ``messages.py``'s).

Each destination gets up to 3 tries, 1 s then 2 s apart, when its server
answers 5xx or 429 or cannot be reached; the outcome of each (status or error,
tries) is kept with the check. A try has 10 s in all, from the name's lookup to
the answer's status (the body is not read): httpx's timeouts bound each read,
and a server sending a byte every few seconds would hold a try forever. The
destinations of a notification are sent to at once, so a notification takes at
most ``longest_seconds`` however many destinations hang. The evaluator sends them
apart from its checks (``delivery.py``). Each outcome is logged and counted
(``report``).

A webhook carries an ``X-Limelight-Delivery`` id that stays the same across tries,
so a receiver can drop a repeat.
"""

from __future__ import annotations

import asyncio
import logging
import smtplib
import ssl
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any
from urllib.parse import urlunsplit

import httpx
import orjson

from limelight import metrics
from limelight.alerts.destinations import DestinationPolicy, RefusedDestination
from limelight.alerts.messages import CheckFacts, email_message, sign, slack_json
from limelight.ids import new_id

log = logging.getLogger("limelight.alerts")

TRIES = 3
BACKOFF_SECONDS = (1.0, 2.0)
TIMEOUT_SECONDS = 10.0
USER_AGENT = "Limelight-Alerts"
# Host name lookups (blocking calls) of every notifier; a lookup past its try's
# time finishes here without holding up the end of the notification.
_LOOKUPS = ThreadPoolExecutor(16, thread_name_prefix="alert-dns")


@dataclass(frozen=True)
class SmtpSettings:
    host: str | None
    port: int = 587
    user: str | None = None
    password: str | None = None
    starttls: bool = True
    sender: str = "limelight@localhost"


@dataclass
class Delivery:
    """The outcome of one destination, as the check's history keeps it; ``pending`` while
    it waits to be sent or is being sent."""

    type: str
    target: str
    tries: int = 0
    status: int | None = None
    error: str | None = None
    ok: bool = False
    pending: bool = False

    @property
    def outcome(self) -> str:
        """delivered, failed (tried: refused, unanswered, unreachable) or dropped (never
        tried: a quota, a bound, a stop, email not set up)."""
        if self.ok:
            return "delivered"
        return "failed" if self.tries else "dropped"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "target": self.target,
            "ok": self.ok,
            "status": self.status,
            "error": self.error,
            "tries": self.tries,
            "pending": self.pending,
        }


def report(facts: CheckFacts, deliveries: Sequence[Delivery]) -> None:
    """A log line and a count for each destination's outcome. The line names the kind of
    destination, never its address: a Slack incoming-webhook URL is its own credential,
    and an email address is a person's."""
    for d in deliveries:
        outcome = d.outcome
        metrics.NOTIFICATIONS.labels(d.type, outcome).inc()
        tries = f"{d.tries} {'try' if d.tries == 1 else 'tries'}"
        detail = f"status {d.status}, {tries}" if d.status is not None else tries
        if d.error:
            detail += f": {d.error}"
        log.log(
            logging.INFO if d.ok else logging.WARNING,
            "alert %s: %s notification to a %s destination %s (%s)",
            facts.alert_id,
            facts.kind.value,
            d.type,
            outcome,
            detail,
            extra={
                "alert_id": facts.alert_id,
                "notification": facts.kind.value,
                "destination": d.type,
                "outcome": outcome,
                "status": d.status,
                "error": d.error,
                "tries": d.tries,
            },
        )


class Notifier:
    def __init__(
        self,
        policy: DestinationPolicy,
        smtp: SmtpSettings,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        timeout: float = TIMEOUT_SECONDS,
    ) -> None:
        self.policy = policy
        self.smtp = smtp
        self._sleep = sleep
        self._timeout = timeout
        # Built once: httpx would build a context for every client (every try), reading
        # the CA bundle each time, 18 ms of CPU. One context serves any number of
        # connections; trust is httpx's bundle as before, not the environment's.
        self._tls = httpx.create_ssl_context(trust_env=False)

    def longest_seconds(self) -> float:
        """The longest a ``send`` takes: every try at its timeout, and the backoff."""
        return TRIES * self._timeout + sum(BACKOFF_SECONDS)

    def send(
        self, destinations: Sequence[dict[str, Any]], facts: CheckFacts, secret: str
    ) -> list[Delivery]:
        """Notify every destination at once; the outcome of each, in their order."""
        return asyncio.run(self.deliver(destinations, facts, secret))

    async def deliver(
        self, destinations: Sequence[dict[str, Any]], facts: CheckFacts, secret: str
    ) -> list[Delivery]:
        """``send`` on the running event loop."""
        sending: list[Awaitable[Delivery]] = []
        for dest in destinations:
            if dest["type"] == "email":
                sending.append(self._email(list(dest["to"]), facts))
                continue
            if dest["type"] == "slack":
                body, headers = orjson.dumps(slack_json(facts)), {}
            else:
                body = orjson.dumps(facts.webhook_json())
                headers = {"X-Limelight-Signature": sign(secret, body)}
            sending.append(self._post(dest["type"], dest["url"], body, headers))
        sent = list(await asyncio.gather(*sending))
        report(facts, sent)
        return sent

    # -- HTTP -----------------------------------------------------------------------------

    async def _post(self, kind: str, url: str, body: bytes, headers: dict[str, str]) -> Delivery:
        delivery = Delivery(kind, url)
        headers = {
            **headers,
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-Limelight-Delivery": new_id(),
        }
        for attempt in range(TRIES):
            delivery.tries = attempt + 1
            try:
                async with asyncio.timeout(self._timeout):
                    status = await self._post_once(url, body, headers)
            except RefusedDestination as exc:
                delivery.error = str(exc)
                return delivery  # not a passing fault: no retry
            except TimeoutError:
                delivery.status = None
                delivery.error = f"the destination did not answer within {self._timeout:g} s"
            except httpx.HTTPError as exc:
                delivery.status, delivery.error = None, f"{type(exc).__name__}: {exc}"[:300]
            else:
                delivery.status, delivery.error = status, None
                if 200 <= status < 300:
                    delivery.ok = True
                    return delivery
                if status < 500 and status != 429:
                    delivery.error = f"the destination answered {status}"
                    return delivery
                delivery.error = f"the destination answered {status}"
            if attempt < TRIES - 1:
                await self._sleep(BACKOFF_SECONDS[attempt])
        return delivery

    async def _post_once(self, url: str, body: bytes, headers: dict[str, str]) -> int:
        """POST to the address the policy checked, with the URL's own host for the Host
        header and for TLS (SNI and the certificate's name). No proxy from the
        environment (it would connect where the check did not look), no redirects."""
        lookup = asyncio.get_running_loop().run_in_executor(_LOOKUPS, self.policy.resolve, url)
        parts, address = await lookup
        port = parts.port or (443 if parts.scheme == "https" else 80)
        ip = f"[{address}]" if address.version == 6 else str(address)
        pinned = urlunsplit((parts.scheme, f"{ip}:{port}", parts.path or "/", parts.query, ""))
        # The name as DNS and TLS know it (bücher.example as xn--bcher-kva.example):
        # headers are ASCII. The policy checked that the name encodes.
        host = (parts.hostname or "").encode("idna").decode("ascii")
        authority = f"[{host}]" if ":" in host else host
        if parts.port is not None:
            authority += f":{parts.port}"
        extensions = {"sni_hostname": host} if parts.scheme == "https" else {}
        async with httpx.AsyncClient(
            timeout=self._timeout, follow_redirects=False, trust_env=False, verify=self._tls
        ) as client:
            request = client.build_request(
                "POST",
                pinned,
                content=body,
                headers={**headers, "Host": authority},
                extensions=extensions,
            )
            answer = await client.send(request, stream=True)  # the status, not the body
            await answer.aclose()
        return answer.status_code

    # -- email ----------------------------------------------------------------------------

    async def _email(self, recipients: list[str], facts: CheckFacts) -> Delivery:
        delivery = Delivery("email", ", ".join(recipients))
        smtp = self.smtp
        if not smtp.host:
            delivery.error = "email is not set up on this server (LIMELIGHT_SMTP_HOST)"
            return delivery
        try:
            message = email_message(facts, smtp.sender, recipients)
        except ValueError as exc:  # an address the message cannot hold: none is sent
            delivery.error = f"not sent: {exc}"
            return delivery
        for attempt in range(TRIES):
            delivery.tries = attempt + 1
            try:  # the operator's own SMTP server, with smtplib's timeout on each step
                await asyncio.to_thread(self._smtp_send, message, recipients)
            except smtplib.SMTPResponseException as exc:
                delivery.status, delivery.error = exc.smtp_code, f"SMTP {exc.smtp_code}"
                if exc.smtp_code < 400 or exc.smtp_code >= 500:
                    return delivery  # a permanent refusal
            except (OSError, smtplib.SMTPException) as exc:
                delivery.error = f"{type(exc).__name__}: {exc}"[:300]
            else:
                delivery.ok, delivery.status, delivery.error = True, 250, None
                return delivery
            if attempt < TRIES - 1:
                await self._sleep(BACKOFF_SECONDS[attempt])
        return delivery

    def _smtp_send(self, message: EmailMessage, recipients: list[str]) -> None:
        smtp = self.smtp
        assert smtp.host is not None
        with smtplib.SMTP(smtp.host, smtp.port, timeout=self._timeout) as client:
            if smtp.starttls:
                client.starttls(context=ssl.create_default_context())
            if smtp.user:
                client.login(smtp.user, smtp.password or "")
            client.send_message(message, from_addr=smtp.sender, to_addrs=recipients)
