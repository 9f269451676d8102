"""ip_to_ipv6 and ipv6_to_ipv4, as VRL's (Rust's std::net parsing and display)."""

from __future__ import annotations

import ipaddress

from ..function import FunctionError
from .declare import B, always, function, req

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_ip(text: str) -> IpAddress:
    """An address as Rust's ``IpAddr::from_str`` reads one: no zone, no brackets, no leading zeros in IPv4."""
    if "%" not in text:
        try:
            return ipaddress.ip_address(text)
        except ValueError:
            pass
    raise FunctionError("unable to parse IP address: invalid IP address syntax")


def display_ipv6(address: ipaddress.IPv6Address) -> str:
    """Rust's form: an IPv4-mapped address as ``::ffff:a.b.c.d``, any other compressed as RFC 5952 says."""
    mapped = address.ipv4_mapped
    return f"::ffff:{mapped}" if mapped is not None else address.compressed


def ip_to_ipv6(value: str) -> str:
    address = parse_ip(value)
    if isinstance(address, ipaddress.IPv4Address):
        return f"::ffff:{address}"
    return display_ipv6(address)


def ipv6_to_ipv4(value: str) -> str:
    """An IPv4-mapped (``::ffff:a.b.c.d``) or IPv4-compatible (``::a.b.c.d``) address as IPv4."""
    address = parse_ip(value)
    if isinstance(address, ipaddress.IPv4Address):
        return str(address)
    packed = address.packed
    if packed[:10] == bytes(10) and packed[10:12] in (b"\x00\x00", b"\xff\xff"):
        return str(ipaddress.IPv4Address(packed[12:]))
    raise FunctionError(f"IPV6 address {display_ipv6(address)} is not compatible with IPV4")


FUNCTIONS = [
    function("ip_to_ipv6", (req("value", B),), always(B, True), ip_to_ipv6),
    function("ipv6_to_ipv4", (req("value", B),), always(B, True), ipv6_to_ipv4),
]
