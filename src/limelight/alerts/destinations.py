"""Where notifications may go: http(s) URLs without credentials, never into the
operator's own network unless the operator allows it.

An alert's webhook is a URL a tenant chooses and the server calls: without a
guard, it is a way to reach the operator's internal services (cloud metadata at
169.254.169.254, a database's HTTP port on 10.x). Every address that is not
globally routable is refused by default: loopback, private and shared ranges,
link-local, multicast, unspecified and reserved ones, IPv4 addresses written
as IPv6 included. A URL naming such an address literally is refused when the
alert is saved; a host name is resolved when a notification is sent, every
address it resolves to is checked, and the connection goes to the address
that was checked (a second lookup could answer differently).
``LIMELIGHT_DESTINATION_ALLOW_NETWORKS`` lets an operator allow some networks.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

MAX_URL_LENGTH = 2048


class RefusedDestination(ValueError):
    """A destination the policy does not allow; the message says why."""


def _plain(address: Address) -> Address:
    """An IPv4 address written as IPv6 (``::ffff:127.0.0.1``) as the IPv4 address it is."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def parse_networks(text: str) -> tuple[Network, ...]:
    """Comma-separated CIDRs (``127.0.0.0/8, ::1/128``); ValueError naming a bad one."""
    out = []
    for part in (p.strip() for p in text.split(",")):
        if part:
            try:
                out.append(ipaddress.ip_network(part, strict=False))
            except ValueError as exc:
                raise ValueError(f"{part!r} is not a network (CIDR): {exc}") from None
    return tuple(out)


@dataclass(frozen=True)
class DestinationPolicy:
    allow: tuple[Network, ...] = ()

    def address_refusal(self, address: Address) -> str | None:
        """Why a connection to ``address`` is refused, or None."""
        plain = _plain(address)
        if any(plain in net for net in self.allow if net.version == plain.version):
            return None
        if plain.is_global and not plain.is_multicast:
            return None
        return (
            f"the address {plain} is in a loopback, private, link-local or reserved range; "
            "the operator can allow it with LIMELIGHT_DESTINATION_ALLOW_NETWORKS"
        )

    def check_url(self, url: str) -> SplitResult:
        """The parsed URL when its form is allowed (checked when an alert is saved)."""
        if len(url) > MAX_URL_LENGTH:
            raise RefusedDestination(f"the URL is longer than {MAX_URL_LENGTH} characters")
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise RefusedDestination(f"not a valid URL: {exc}") from None
        if parts.scheme not in ("http", "https"):
            raise RefusedDestination("the URL must start with http:// or https://")
        if not parts.hostname:
            raise RefusedDestination("the URL names no host")
        if parts.username is not None or parts.password is not None:
            raise RefusedDestination("the URL may not hold credentials (user:password@)")
        if port == 0:
            raise RefusedDestination("the URL's port must be 1 to 65535")
        try:
            literal: Address | None = ipaddress.ip_address(parts.hostname)
        except ValueError:
            literal = None
        if literal is not None and (reason := self.address_refusal(literal)):
            raise RefusedDestination(reason)
        return parts

    def resolve(self, url: str) -> tuple[SplitResult, Address]:
        """The URL and the one address to connect to, checked at send time."""
        parts = self.check_url(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise RefusedDestination(f"the host {host!r} could not be resolved: {exc}") from None
        addresses = [ipaddress.ip_address(info[4][0]) for info in found]
        if not addresses:
            raise RefusedDestination(f"the host {host!r} has no address")
        for address in addresses:  # one refused address refuses the host
            if reason := self.address_refusal(address):
                raise RefusedDestination(reason)
        return parts, addresses[0]
