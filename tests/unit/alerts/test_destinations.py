"""Notifications never reach into the operator's network unless allowed."""

from __future__ import annotations

import logging

import pytest

from limelight.alerts.destinations import (
    UNREACHABLE,
    DestinationPolicy,
    RefusedDestination,
    parse_networks,
)

REFUSED = [
    "http://127.0.0.1/hook",
    "http://127.1.2.3:8080/hook",
    "http://10.0.0.5/hook",
    "http://172.16.9.9/hook",
    "http://192.168.1.1/hook",
    "http://169.254.169.254/latest/meta-data",  # cloud metadata
    "http://100.64.0.1/hook",  # shared address space
    "http://0.0.0.0/hook",
    "http://[::1]/hook",
    "http://[::ffff:127.0.0.1]/hook",  # IPv4 written as IPv6
    "http://[fd00:ec2::254]/hook",
    "http://[fe80::1]/hook",
    "http://224.0.0.1/hook",
    # IPv4 in the forms a resolver also reads (decimal, hex, octal, shortened)
    "http://2130706433/hook",
    "http://0x7f.1/hook",
    "http://127.1/hook",
    "http://0177.0.0.1/hook",
    "http://0x7F000001/hook",
    "http://0251.0376.0251.0376/latest/meta-data",
    "http://10.1/hook",
    "http://127.0.0.1./hook",  # the dot of a fully qualified name
    "http://169.254.169.254./latest/meta-data",
    # IPv4 inside IPv6: NAT64 (a gateway translates it to the IPv4 address), 6to4
    "http://[64:ff9b::127.0.0.1]/hook",
    "http://[64:ff9b::a9fe:a9fe]/hook",
    "http://[2002:a00:1::1]/hook",
    "http://[2002:7f00:1::]/hook",
    # reserved IPv6: IPv4-compatible and -translated, site-local, unassigned
    "http://[::127.0.0.1]/hook",
    "http://[::ffff:0:7f00:1]/hook",
    "http://[fec0::1]/hook",
    "http://[5f00::1]/hook",
]


@pytest.mark.parametrize("url", REFUSED)
def test_literal_addresses_in_refused_ranges_are_refused(url: str) -> None:
    with pytest.raises(RefusedDestination, match="LIMELIGHT_DESTINATION_ALLOW_NETWORKS"):
        DestinationPolicy().check_url(url)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://example.com/x", "http:// or https://"),
        ("file:///etc/passwd", "http:// or https://"),
        ("https://user:pw@example.com/x", "credentials"),
        ("https://token@example.com/x", "credentials"),
        ("https:///nohost", "no host"),
        ("https://example.com:99999/x", "valid URL"),
        ("https://example.com/" + "x" * 3000, "longer than"),
        # urlsplit takes these and the sender's parser does not: saved, then every
        # notification failed on an internal error and the alert's test answered 500.
        ("https://example.com/a\x01b", "valid URL"),
        ("https://example.com/a\x7fb", "valid URL"),
    ],
)
def test_only_plain_http_urls_are_destinations(url: str, reason: str) -> None:
    with pytest.raises(RefusedDestination, match=reason):
        DestinationPolicy().check_url(url)


def test_public_addresses_and_names_pass_the_form_check() -> None:
    policy = DestinationPolicy()
    for public in ("http://[2002:808:808::1]/", "http://[64:ff9b::8.8.8.8]/", "http://8.8.8.8/"):
        assert policy.check_url(public)  # public IPv4 behind 6to4 or NAT64 is public
    assert policy.check_url("http://0xdeadbeef.example/x").hostname == "0xdeadbeef.example"
    assert policy.check_url("https://hooks.slack.com/services/T/B/X").hostname == "hooks.slack.com"
    assert policy.check_url("http://93.184.216.34:8080/hook").port == 8080


def test_a_private_name_and_an_unknown_name_get_one_answer_and_the_log_the_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A tenant learns nothing of the operator's network from a test notification: a
    name that resolves to a private address (``localhost``) and a name that does not
    resolve at all are refused in the same words; the operator's log says which."""
    answers = []
    with caplog.at_level(logging.WARNING, logger="limelight.alerts"):
        for url in ("http://localhost:9/hook", "http://nowhere.invalid:9/hook"):
            with pytest.raises(RefusedDestination) as refused:
                DestinationPolicy().resolve(url)
            answers.append(str(refused.value).encode())
    assert answers == [UNREACHABLE.encode()] * 2
    [private, unknown] = [r.getMessage() for r in caplog.records]
    assert "'localhost'" in private and "loopback" in private
    assert "'nowhere.invalid'" in unknown and "could not be resolved" in unknown


@pytest.mark.parametrize(
    "host", ["a" * 64 + ".example.com", "a..example.com", ".example.com", "x" * 300]
)
def test_a_host_name_no_resolver_takes_is_refused(host: str) -> None:
    """Names the IDNA codec refuses (an empty label, one over 63 characters) are a 400,
    and refused at send time rather than failing the check that sends."""
    for step in (DestinationPolicy().check_url, DestinationPolicy().resolve):
        with pytest.raises(RefusedDestination, match="not valid"):
            step(f"http://{host}/hook")


def test_the_operator_can_allow_networks() -> None:
    policy = DestinationPolicy(parse_networks("127.0.0.0/8, ::1/128"))
    assert policy.check_url("http://127.0.0.1:9/hook")
    _, address = policy.resolve("http://127.0.0.1:9/hook")
    assert str(address) == "127.0.0.1"
    with pytest.raises(RefusedDestination):
        policy.check_url("http://10.0.0.1/hook")  # only what was allowed
    with pytest.raises(ValueError, match="not a network"):
        parse_networks("10.0.0.0/33")
