"""Where notifications may go: http(s) URLs without credentials, never into the
operator's own network unless the operator allows it.

An alert's webhook is a URL a tenant chooses and the server calls: without a
guard, it is a way to reach the operator's internal services (cloud metadata at
169.254.169.254, a database's HTTP port on 10.x). Every address that is not
globally routable is refused by default: loopback, private and shared ranges,
link-local, multicast, unspecified and reserved ones. An IPv4 address is
judged in every form that reaches it: written as IPv6 (mapped, 6to4, behind a
NAT64 gateway), or as a resolver also reads it (``2130706433``, ``0x7f.1``,
``127.1``). A URL naming such an address literally is refused when the
alert is saved; a host name is resolved when a notification is sent, every
address it resolves to is checked, and the connection goes to the address
that was checked (a second lookup could answer differently).
``LIMELIGHT_DESTINATION_ALLOW_NETWORKS`` lets an operator allow some networks.

A host name refused at send time gets one answer whatever the reason
(``UNREACHABLE``): a name that resolves to a private address and a name that
does not resolve at all must look alike, or a tenant's test notifications map
which names the operator's network knows. The operator's log keeps the reason.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

import httpx

from limelight.errors import InvalidValue

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

log = logging.getLogger("limelight.alerts")

MAX_URL_LENGTH = 2048
# The one answer to a host name refused at send time (see above).
UNREACHABLE = "destination refused: not a public address that can be reached"
# The well-known NAT64 prefix: a gateway on the operator's network translates
# 64:ff9b::a.b.c.d to the IPv4 address a.b.c.d, private ones included.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
# Host names that may be IPv4 in inet_aton's forms (decimal, octal, hex, fewer
# than 4 parts). Only these reach inet_aton, which accepts trailing text after a space.
_NUMERIC_HOST = re.compile(r"[0-9a-fx.]+", re.IGNORECASE)


class RefusedDestination(InvalidValue):
    """A destination the policy does not allow; the message says why."""


def _plain(address: Address) -> Address:
    """An IPv4 address written as IPv6 as the IPv4 address it reaches: mapped
    (``::ffff:127.0.0.1``), 6to4 (``2002:7f00:1::``), NAT64 (``64:ff9b::127.0.0.1``)."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address.sixtofour is not None:
            return address.sixtofour
        if address in _NAT64:
            return ipaddress.IPv4Address(address.packed[-4:])
    return address


def _literal(host: str) -> Address | None:
    """The address a host names literally, IPv4 in inet_aton's forms included: the
    resolver at send time reads ``http://2130706433/`` as 127.0.0.1 (and some read
    ``127.0.0.1.``, with the dot of a fully qualified name, as 127.0.0.1)."""
    host = host.removesuffix(".")
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if _NUMERIC_HOST.fullmatch(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            pass
    return None


def _routable(address: Address) -> bool:
    """Globally reachable unicast. ``is_global`` alone lets reserved IPv6 through
    (``::127.0.0.1``, ``fec0::/10``, unassigned ranges) on the Pythons we support."""
    site_local = isinstance(address, ipaddress.IPv6Address) and address.is_site_local
    return (
        address.is_global
        and not address.is_multicast
        and not address.is_reserved
        and not site_local
    )


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
        if _routable(plain):
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
        literal = _literal(parts.hostname)
        if literal is not None and (reason := self.address_refusal(literal)):
            raise RefusedDestination(reason)
        if literal is None:
            try:  # what getaddrinfo does with the name; it raises UnicodeError, not OSError
                parts.hostname.encode("idna")
            except UnicodeError:
                raise RefusedDestination(
                    "the host name is not valid (an empty label, or one over 63 characters)"
                ) from None
        try:  # the sender's parser: it refuses what urlsplit takes (control characters)
            httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise RefusedDestination(f"not a valid URL: {exc}") from None
        return parts

    def resolve(self, url: str) -> tuple[SplitResult, Address]:
        """The URL and the one address to connect to, checked at send time."""
        parts = self.check_url(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        named = _literal(host) is None
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise _unreachable(host, f"could not be resolved: {exc}") from None
        addresses = [ipaddress.ip_address(info[4][0]) for info in found]
        if not addresses:
            raise _unreachable(host, "has no address")
        for address in addresses:  # one refused address refuses the host
            if reason := self.address_refusal(address):
                # A literal address was the client's own writing: it may hear why.
                raise _unreachable(host, reason) if named else RefusedDestination(reason)
        return parts, addresses[0]


def _unreachable(host: str, reason: str) -> RefusedDestination:
    """The one answer of a refused host name; the reason is the operator's (logged). The
    host, not the URL: a Slack URL's path is a credential."""
    log.warning("alert destination refused: host %r: %s", host, reason)
    return RefusedDestination(UNREACHABLE)
