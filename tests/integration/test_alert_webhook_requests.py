"""The request a webhook destination gets: to the address checked, under its own name."""

from __future__ import annotations

import ipaddress
from urllib.parse import SplitResult

from limelight.alerts.check import Notification
from limelight.alerts.destinations import Address, DestinationPolicy, parse_networks
from limelight.alerts.messages import CheckFacts
from limelight.alerts.notify import Notifier, SmtpSettings
from tests.alert_support import webhook_receiver

FACTS = CheckFacts(
    Notification.TEST, "a1", "x", "http://console/alerts/a1", "OK", "OK", "c1",
    0, 0, 60_000, "COUNT", ">", 1.0, [],
)  # fmt: skip


class LocalDns(DestinationPolicy):
    """Every name resolves to 127.0.0.1, as a name the test cannot register would."""

    def resolve(self, url: str) -> tuple[SplitResult, Address]:
        return self.check_url(url), ipaddress.IPv4Address("127.0.0.1")


def test_an_international_host_name_is_sent_as_dns_and_tls_know_it() -> None:
    """httpx takes only ASCII headers: a Host of "bücher.example" failed the whole check."""
    with webhook_receiver() as hooks:
        url = f"http://Bücher.example:{hooks.port}/idn"
        [delivery] = Notifier(LocalDns(), SmtpSettings(host=None)).send(
            [{"type": "webhook", "url": url}], FACTS, "ll_ws_x"
        )
        assert (delivery.ok, delivery.status) == (True, 200), delivery
        [received] = hooks.on("/idn")
    assert received.headers["host"] == f"xn--bcher-kva.example:{hooks.port}"


def test_an_ipv6_literal_keeps_its_brackets_in_the_host_header() -> None:
    with webhook_receiver() as hooks:
        url = f"http://[::1]:{hooks.port}/v6"
        policy = LocalDns(parse_networks("::1/128"))
        [delivery] = Notifier(policy, SmtpSettings(host=None)).send(
            [{"type": "webhook", "url": url}], FACTS, "ll_ws_x"
        )
        assert delivery.ok, delivery
        [received] = hooks.on("/v6")
    assert received.headers["host"] == f"[::1]:{hooks.port}"
