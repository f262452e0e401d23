"""What a notification says, as each destination gets it."""

from __future__ import annotations

from typing import Any

import pytest

from limelight.alerts.check import Notification
from limelight.alerts.messages import CheckFacts, email_message, slack_json


def _facts(name: str = "slow checkouts", values: list[dict[str, Any]] | None = None) -> CheckFacts:
    return CheckFacts(
        Notification.FIRING, "a1", name, "http://console/alerts/a1", "ALARM", "OK", "c1",
        1_763_700_060_000, 1_763_699_760_000, 1_763_700_060_000, "COUNT", ">", 5.0,
        values or [{"groups": {}, "value": 9, "alarm": True}],
    )  # fmt: skip


def test_an_email_subject_is_one_line_whatever_the_name() -> None:
    """Names are refused with a line break; one stored before still makes one line
    (EmailMessage refuses a header with a line break, which failed the check)."""
    mail = email_message(_facts("slow\r\nBcc: someone@example.com"), "a@b.c", ["o@b.c"])
    assert (
        mail["Subject"] == "[FIRING] slow Bcc: someone@example.com: COUNT > 5 over the last 5 min"
    )
    assert mail["Bcc"] is None


def test_an_encoded_word_in_a_name_is_written_as_text_not_decoded_into_headers() -> None:
    """The header's parser decodes =?charset?q?...?=: `=0D=0A` in a name wrote a
    Reply-To of the name's own into the mail."""
    name = "=?utf-8?q?x=0D=0AReply-To:=20evil=40e.vil?="
    mail = email_message(_facts(name), "a@b.c", ["o@b.c"])
    assert mail["Subject"] == (
        "[FIRING] = ?utf-8?q?x=0D=0AReply-To:=20evil=40e.vil?=: COUNT > 5 over the last 5 min"
    )
    assert mail["Reply-To"] is None and "Reply-To: evil" not in mail.as_string()


def test_an_address_with_an_encoded_word_is_no_recipient() -> None:
    """Refused when saved; one stored before is not sent (it wrote a Bcc of its own)."""
    address = "a@=?utf-8?q?b.c=0D=0ABcc:=20x=40y.z?=.c"
    with pytest.raises(ValueError, match="encoded word"):
        email_message(_facts(), "a@b.c", [address])


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_a_slack_message_escapes_what_slack_reads_as_markup() -> None:
    """Group values come from events (anyone with the public ingest key): "<!channel>"
    or "<https://evil.example|log in>" must reach Slack as text, not as a mention of
    everyone or a disguised link. Slack asks for &, < and > escaped."""
    values = [{"groups": {"service": "<!channel> <https://evil.example|log in>"},
               "value": 9, "alarm": True}]  # fmt: skip
    message = slack_json(_facts("5xx <!here> & co", values))
    texts = [t for t in _strings(message) if t != message["attachments"][0]["title_link"]]
    assert all("<" not in t and ">" not in t for t in texts), texts
    assert message["text"].startswith("[FIRING] 5xx &lt;!here&gt; &amp; co: COUNT")
    [field] = message["attachments"][0]["fields"]
    assert field["title"] == "service=&lt;!channel&gt; &lt;https://evil.example|log in&gt;"
