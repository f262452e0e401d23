"""What a notification says, as each destination gets it."""

from __future__ import annotations

from typing import Any

from limelight.alerts.check import Notification
from limelight.alerts.notify import CheckFacts, email_message


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
