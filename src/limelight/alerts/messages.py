"""What a notification of a check says, in each destination's format: the webhook's
JSON and its signature, a Slack message, an email (text and HTML).

A webhook carries ``X-Limelight-Signature: sha256=<HMAC-SHA256 of the body with
the alert's webhook secret>``. A test notification has the same shape as a real one.
Text from events (group values) and the alert's name are escaped for Slack's markup
and for HTML; an email's subject is one line, whatever line breaks the name holds.
"""

from __future__ import annotations

import hashlib
import hmac
import html
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from typing import Any

from limelight.alerts.check import Notification
from limelight.alerts.spec import as_written
from limelight.times import MINUTE_MS

# Groups named in a Slack message or an email (the webhook carries them all).
LISTED_GROUPS = 20


@dataclass(frozen=True)
class CheckFacts:
    """What a notification tells: the alert, the check, and why."""

    kind: Notification
    alert_id: str
    alert_name: str
    alert_url: str
    state: str
    previous_state: str
    check_id: str
    time_ms: int
    from_ms: int
    to_ms: int
    calculation: str
    operation: str
    threshold: float
    values: list[dict[str, Any]]

    def webhook_json(self) -> dict[str, Any]:
        return {
            "alert": {"id": self.alert_id, "name": self.alert_name, "url": self.alert_url},
            "notification": self.kind.value,
            "state": self.state,
            "previous_state": self.previous_state,
            "check": {
                "id": self.check_id,
                "time": self.time_ms,
                "from": self.from_ms,
                "to": self.to_ms,
                "calculation": self.calculation,
                "threshold": {"operation": self.operation, "value": as_written(self.threshold)},
                "values": self.values,
            },
        }

    def headline(self) -> str:
        label = {"firing": "FIRING", "resolved": "RESOLVED", "test": "TEST"}[self.kind.value]
        return f"[{label}] {self.alert_name}"

    def condition(self) -> str:
        minutes = max(1, round((self.to_ms - self.from_ms) / MINUTE_MS))
        return f"{self.calculation} {self.operation} {self.threshold:g} over the last {minutes} min"

    def listed(self) -> list[tuple[str, str]]:
        """(groups, value) of the groups to name: those in alarm first."""
        ordered = sorted(self.values, key=lambda v: not v.get("alarm"))
        out = []
        for v in ordered[:LISTED_GROUPS]:
            groups = ", ".join(f"{k}={g}" for k, g in (v.get("groups") or {}).items())
            mark = " (alarm)" if v.get("alarm") else ""
            out.append((groups or "all events", f"{v.get('value')}{mark}"))
        return out


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _slack_text(text: str) -> str:
    """Text as Slack shows it, not as its markup: "<!channel>" from an event's value would
    notify everyone, "<https://x|log in>" would be a disguised link. Slack asks for
    exactly these three escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_json(facts: CheckFacts) -> dict[str, Any]:
    colour = {"firing": "#d93025", "resolved": "#1e8e3e", "test": "#5f6368"}[facts.kind.value]
    headline, condition = _slack_text(facts.headline()), _slack_text(facts.condition())
    return {
        "text": f"{headline}: {condition}",
        "attachments": [
            {
                "color": colour,
                "title": headline,
                "title_link": facts.alert_url,
                "text": _slack_text(
                    f"{facts.condition()}\nState: {facts.previous_state} -> {facts.state}"
                ),
                "fields": [
                    {"title": _slack_text(groups), "value": _slack_text(value), "short": True}
                    for groups, value in facts.listed()
                ],
                "ts": facts.time_ms // 1000,
            }
        ],
    }


def email_message(facts: CheckFacts, sender: str, recipients: Sequence[str]) -> EmailMessage:
    msg = EmailMessage()
    # One line: a header may not hold a line break (an alert's name may). Nor an encoded
    # word (=?utf-8?q?...?=), which the header's parser decodes: `=0D=0A` in an alert's
    # name wrote a header of the name's own (Reply-To) into the message.
    subject = " ".join(f"{facts.headline()}: {facts.condition()}".split())
    msg["Subject"] = subject.replace("=?", "= ?")
    msg["From"] = sender
    if any("=?" in address for address in recipients):  # saved before they were refused
        raise ValueError("an address holds an encoded word (=?...?=)")
    msg["To"] = ", ".join(recipients)
    when = datetime.fromtimestamp(facts.time_ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    lines = [
        facts.headline(),
        "",
        facts.condition(),
        f"State: {facts.previous_state} -> {facts.state} (checked {when})",
        "",
        *(f"  {groups}: {value}" for groups, value in facts.listed()),
        "",
        facts.alert_url,
    ]
    msg.set_content("\n".join(lines))
    rows = "".join(
        f"<tr><td>{html.escape(groups)}</td><td>{html.escape(value)}</td></tr>"
        for groups, value in facts.listed()
    )
    msg.add_alternative(
        f"<h2>{html.escape(facts.headline())}</h2>"
        f"<p>{html.escape(facts.condition())}<br>"
        f"State: {html.escape(facts.previous_state)} &rarr; {html.escape(facts.state)} "
        f"(checked {when})</p>"
        f"<table>{rows}</table>"
        f'<p><a href="{html.escape(facts.alert_url)}">Open the alert</a></p>',
        subtype="html",
    )
    return msg
